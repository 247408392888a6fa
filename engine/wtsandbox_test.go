package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/hostctl"
)

// emptyDir fails the test when dir holds anything: a server that read a
// refused string would have written its journal, statistics or tracking
// files there.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		t.Errorf("%s holds %d entries (%v): a server wrote there", dir, len(entries), err)
	}
}

// refusedQuietly fails the test unless err refuses with want and names no
// directory of dirs.
func refusedQuietly(t *testing.T, what string, err error, want string, dirs ...string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v, want an error containing %q", what, err, want)
		return
	}
	for _, d := range dirs {
		if strings.Contains(err.Error(), d) {
			t.Errorf("%s: the error quotes the directory: %v", what, err)
		}
	}
}

// writeNotALibrary writes x.so in the run's directory, as a playbook can
// with io.open, and returns its path.
func writeNotALibrary(t *testing.T, r *Run) string {
	t.Helper()
	so := filepath.Join(r.Dir(), "x.so")
	if err := os.WriteFile(so, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	return so
}

func TestWiredTigerStringsThatNameFilesStartNoServer(t *testing.T) {
	ctx := context.Background()
	r, st, _ := newTestRun(t, 0)
	logDir, statDir := t.TempDir(), t.TempDir()
	so := writeNotALibrary(t, r)
	for _, tt := range []struct {
		name string
		opts ServerOptions
		want string
	}{
		{"quoted extensions", ServerOptions{Settings: hostctl.Settings{EngineConfig: `"extensions"=["` + so + `"]`}},
			`engineConfig: the WiredTiger key "extensions" is refused`},
		{"quoted log path", ServerOptions{Settings: hostctl.Settings{EngineConfig: `log=(enabled=true,"path"="` + logDir + `",file_max=100KB,prealloc=false)`}},
			`engineConfig: the WiredTiger key "log.path" is refused`},
		{"statistics path", ServerOptions{Settings: hostctl.Settings{EngineConfig: `statistics=(fast),statistics_log=(wait=1,"path"="` + statDir + `")`}},
			`engineConfig: the WiredTiger key "statistics_log.path" is refused`},
		{"startup runtime config", ServerOptions{Settings: hostctl.Settings{SetParameters: map[string]string{
			"wiredTigerEngineRuntimeConfig": `statistics=(fast),statistics_log=(wait=1,path="` + statDir + `")`}}},
			`setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "statistics_log.path" is refused`},
		{"runtime config in args", ServerOptions{Settings: hostctl.Settings{ExtraArgs: []string{"--setParameter",
			`wiredTigerEngineRuntimeConfig=log=(enabled=true,"path"="` + logDir + `",file_max=100KB,prealloc=false)`}}},
			`args[2] --setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "log.path" is refused`},
		{"collection string in args", ServerOptions{Settings: hostctl.Settings{ExtraArgs: []string{"--wiredTigerCollectionConfigString", `type="file:` + statDir + `/c"`}}},
			`args[2] --wiredTigerCollectionConfigString: the WiredTiger key "type" is refused`},
		{"ftdc directory", ServerOptions{Settings: hostctl.Settings{SetParameters: map[string]string{"diagnosticDataCollectionDirectoryPath": statDir}}},
			"setParameter diagnosticDataCollectionDirectoryPath is refused"},
		{"free monitoring", ServerOptions{Settings: hostctl.Settings{ExtraArgs: []string{"--enableFreeMonitoring", "on"}}}, "args[1] --enableFreeMonitoring is refused"},
		{"free monitoring endpoint", ServerOptions{Settings: hostctl.Settings{SetParameters: map[string]string{"cloudFreeMonitoringEndpointURL": "http://10.1.2.3/"}}},
			"setParameter cloudFreeMonitoringEndpointURL is refused"},
		{"ldap", ServerOptions{Settings: hostctl.Settings{SetParameters: map[string]string{"ldapServers": "10.1.2.3"}}}, "setParameter ldapServers is refused"},
	} {
		_, err := r.StartServer(ctx, tt.opts)
		refusedQuietly(t, "StartServer "+tt.name, err, tt.want, logDir, statDir)
	}
	if recs, err := st.Servers(ctx, r.ID); err != nil || len(recs) != 0 {
		t.Errorf("servers after the refused starts: %+v, %v; want none", recs, err)
	}
	emptyDir(t, logDir)
	emptyDir(t, statDir)
}

func TestWiredTigerStringsThatNameFilesNeverReachARunningServer(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	logDir, statDir := t.TempDir(), t.TempDir()
	so := writeNotALibrary(t, r)
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	runtime := `operation_tracking=(enabled=true,"path"="` + statDir + `")`
	refusedQuietly(t, "Reconfigure", s.Reconfigure(ctx, runtime), `reconfigure: the WiredTiger key "operation_tracking.path" is refused`, statDir)
	refusedQuietly(t, "Reconfigure", s.Reconfigure(ctx, "log=(path="+logDir+")"), `the WiredTiger key "log.path" is refused`, logDir)
	_, err = s.SetParameter(ctx, "wiredTigerEngineRuntimeConfig", `"extensions"=["`+so+`"]`)
	refusedQuietly(t, "SetParameter", err, `setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "extensions" is refused`)
	_, err = s.SetParameter(ctx, "diagnosticDataCollectionDirectoryPath", statDir)
	refusedQuietly(t, "SetParameter", err, "setParameter diagnosticDataCollectionDirectoryPath is refused", statDir)
	for _, tt := range []struct {
		cmd  bson.D
		want string
	}{
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: runtime}},
			`setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused`},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: 0}, {Key: "WiredTigerEngineRuntimeConfig", Value: runtime}},
			`setParameter WiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused`},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "cloudFreeMonitoringEndpointURL", Value: "http://10.1.2.3/"}},
			"setParameter cloudFreeMonitoringEndpointURL is refused"},
		{bson.D{{Key: "setFreeMonitoring", Value: 1}, {Key: "action", Value: "enable"}}, "setFreeMonitoring is refused"},
		{bson.D{{Key: "create", Value: "c"}, {Key: "storageEngine", Value: bson.D{{Key: "wiredTiger", Value: bson.D{
			{Key: "configString", Value: `source="file:` + statDir + `/c.wt"`}}}}}},
			`storageEngine.wiredTiger.configString: the WiredTiger key "source" is refused`},
	} {
		_, err := s.CommandDB(ctx, "test", tt.cmd)
		refusedQuietly(t, "CommandDB "+tt.cmd[0].Key, err, tt.want, statDir)
	}
	engineConfig := `log=(enabled=true,"path"="` + logDir + `",file_max=100KB,prealloc=false)`
	refusedQuietly(t, "Restart", s.Restart(ctx, changing(hostctl.Settings{EngineConfig: engineConfig})), `engineConfig: the WiredTiger key "log.path" is refused`, logDir)
	refusedQuietly(t, "Restart", s.Restart(ctx, changing(hostctl.Settings{SetParameters: map[string]string{"wiredTigerEngineRuntimeConfig": runtime}})),
		`setParameter wiredTigerEngineRuntimeConfig: the WiredTiger key "operation_tracking.path" is refused`, statDir)

	// The server answers, as the same process, and takes what is allowed.
	if got := s.PID(); got != pid {
		t.Errorf("pid %d after the refusals, want %d", got, pid)
	}
	if err := s.Reconfigure(ctx, "eviction_target=70,eviction=(threads_max=6)"); err != nil {
		t.Errorf("an allowed reconfigure: %v", err)
	}
	emptyDir(t, logDir)
	emptyDir(t, statDir)
}

func TestRefusedParameterOnAnAttachedServerIsNeitherReadNorRecorded(t *testing.T) {
	ctx := context.Background()
	_, uri := startTestServer(t)
	r, st, _ := newTestRun(t, 0)
	s, err := r.ConnectServer(ctx, uri, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.SetParameterKeep(ctx, "diagnosticDataCollectionDirectoryPath", "/var/tmp/ftdc", false)
	refusedQuietly(t, "SetParameterKeep", err, "setParameter diagnosticDataCollectionDirectoryPath is refused: its value is a path", "/var/tmp")
	err = s.ReconfigureKeep(ctx, "log=(path=/var/tmp/j)", true)
	refusedQuietly(t, "ReconfigureKeep", err, `reconfigure: the WiredTiger key "log.path" is refused`, "/var/tmp")
	if changes, err := st.Changes(ctx, r.ID); err != nil || len(changes) != 0 {
		t.Errorf("changes recorded for refused settings: %+v, %v", changes, err)
	}
}

// TestSandboxedCommandsAreRefusedBeforeTheyAreRecorded: with the
// operator's AllowCommands, a command the sandbox refuses is still refused
// on an attached server, and no change is recorded for it.
func TestSandboxedCommandsAreRefusedBeforeTheyAreRecorded(t *testing.T) {
	ctx := context.Background()
	r, st, s, _, _ := attachedRun(t, Config{AllowCommands: true})
	for _, cmd := range []bson.D{
		{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "statistics_log=(wait=1,path=/var/tmp/st)"}},
		{{Key: "setParameter", Value: 1}, {Key: "ldapServers", Value: "10.1.2.3"}},
		{{Key: "setFreeMonitoring", Value: 1}, {Key: "action", Value: "enable"}},
	} {
		_, err := s.PlaybookCommand(ctx, "admin", cmd)
		refusedQuietly(t, "PlaybookCommand "+cmd[0].Key, err, "is refused", "/var/tmp")
	}
	if changes, err := st.Changes(ctx, r.ID); err != nil || len(changes) != 0 {
		t.Errorf("changes recorded for refused commands: %+v, %v", changes, err)
	}
}
