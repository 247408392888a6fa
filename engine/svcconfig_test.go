package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine/mongodconf"
	"wtd/hostctl"
)

func TestEditConfigKeepsOtherKeysAndComments(t *testing.T) {
	in := "# mongod.conf\n\nsystemLog:\n    destination: file # where\n    path: '/var/log/mongodb/mongod.log'\n\n# storage\nstorage:\n    dbPath: \"/data\"\n    journal: {enabled: true}\nnet: {port: 27017, bindIp: 127.0.0.1}\nsetParameter:\n    ttlMonitorSleepSecs: 60\n"
	c, sd := 0.25, 25.0
	ec := "eviction_target=75"
	out, err := mongodconf.Apply([]byte(in), editsFor(changing(hostctl.Settings{CacheSizeGB: c, SyncDelay: sd, EngineConfig: ec,
		SetParameters: map[string]string{"ttlMonitorSleepSecs": "30", "x": "true"}})))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"# mongod.conf\n", "destination: file # where", "path: '/var/log/mongodb/mongod.log'", "# storage\nstorage:",
		"dbPath: \"/data\"", "journal: {enabled: true}", "net: {port: 27017, bindIp: 127.0.0.1}",
		"    wiredTiger:\n        engineConfig:\n            cacheSizeGB: 0.25\n            configString: eviction_target=75",
		"syncPeriodSecs: 25", "ttlMonitorSleepSecs: 30", "x: true"} {
		if !strings.Contains(got, want) {
			t.Errorf("edited config lacks %q:\n%s", want, got)
		}
	}
	spec, err := mongodconf.Settings(out)
	if err != nil || spec.CacheSizeGB != 0.25 || spec.SyncDelay != 25 || spec.EngineConfig != ec || spec.SetParameters["ttlMonitorSleepSecs"] != "30" {
		t.Errorf("settings read back: %+v, %v", spec, err)
	}
	bad := 0.1
	out, _ = mongodconf.Apply([]byte(in), editsFor(changing(hostctl.Settings{CacheSizeGB: bad})))
	if spec, _ := mongodconf.Settings(out); spec.Check() == nil {
		t.Error("cacheSizeGB 0.1 passed the settings checks")
	}
	if _, err := mongodconf.Apply([]byte("port = 27017\n"), nil); err == nil {
		t.Error("an INI-style config was edited")
	}
}

func TestWriteFileAsKeepsTheMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mongod.conf")
	os.WriteFile(p, []byte("a: 1\n"), 0o604)
	o, err := mongodconf.StatOwner(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := mongodconf.WriteAs(p, []byte("a: 2\n"), o); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	b, _ := os.ReadFile(p)
	if st.Mode().Perm() != 0o604 || string(b) != "a: 2\n" {
		t.Errorf("after the write: mode %v, content %q", st.Mode(), b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".mongod.conf.wtd-*")); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}
