package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fullConfig = `# every key
listen: 127.0.0.1:7071
api_max_connections: 16
db: state/wtd.db
mongod: /usr/bin/mongod
sample_interval: 500ms
max_memory: 512MiB
services: [mongod, mongod-archive]
allow_commands: true
schedules:
  - name: nightly-cache-sweep
    cron: "CRON_TZ=Europe/Berlin 0 2 * * *"
    playbook: playbooks/cache_sweep.lua
    params: { docs: 600000, sizes: [0.25, 2], name: x, quick: true }
    timeout: 2h
    catch_up: 6h
windows:
  - name: offpeak-ttl
    cron: "0 1 * * *"
    duration: 4h
    server: mongodb://127.0.0.1:27017
    open:  { setParameter: { ttlMonitorEnabled: true, ttlMonitorSleepSecs: 1 } }
    close: { setParameter: { ttlMonitorEnabled: false } }
    leave_open: true
`

func TestParseConfig(t *testing.T) {
	path := "/etc/wtd/wtd.yaml"
	cfg, err := ParseConfig(path, []byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:7071" || cfg.DB != "/etc/wtd/state/wtd.db" || cfg.Mongod != "/usr/bin/mongod" || cfg.SampleInterval != 500*time.Millisecond ||
		cfg.APIMaxConnections != 16 || cfg.MaxMemory != 512<<20 {
		t.Errorf("top: %+v", cfg)
	}
	if empty, err := ParseConfig(path, nil); err != nil || empty.APIMaxConnections != DefaultAPIMaxConnections {
		t.Errorf("an empty config's api_max_connections: %+v, %v", empty, err)
	}
	if len(cfg.Services) != 2 || cfg.Services[1] != "mongod-archive" {
		t.Errorf("services: %v", cfg.Services)
	}
	if _, err := ParseConfig(path, []byte("services: [\"--now\"]\n")); err == nil || !strings.Contains(err.Error(), "not a unit name") {
		t.Errorf("a service named like a flag: %v", err)
	}
	if !cfg.AllowCommands {
		t.Error("allow_commands: true was not read")
	}
	if c, err := ParseConfig(path, []byte("listen: 127.0.0.1:7071\n")); err != nil || c.AllowCommands {
		t.Errorf("without allow_commands: %v, %v; want commands refused", c.AllowCommands, err)
	}
	if _, err := ParseConfig(path, []byte("allow_commands: yes please\n")); err == nil || !strings.Contains(err.Error(), "allow_commands") {
		t.Errorf("allow_commands that is not a boolean: %v", err)
	}
	s := cfg.Schedules[0]
	if s.Playbook != "/etc/wtd/playbooks/cache_sweep.lua" || s.Timeout != 2*time.Hour || s.CatchUp != 6*time.Hour {
		t.Errorf("schedule: %+v", s)
	}
	want := map[string]string{"docs": "600000", "sizes": "0.25,2", "name": "x", "quick": "true"}
	for k, v := range want {
		if s.Overrides[k] != v {
			t.Errorf("override %s = %q, want %q", k, s.Overrides[k], v)
		}
	}
	// 02:00 in Berlin is 01:00 or 00:00 UTC.
	next := NextTimes(s.Spec, time.Date(2030, 1, 15, 12, 0, 0, 0, time.UTC), 2)
	if len(next) != 2 || !next[0].Equal(time.Date(2030, 1, 16, 1, 0, 0, 0, time.UTC)) || next[1].Sub(next[0]) != 24*time.Hour {
		t.Errorf("next fires: %v", next)
	}
	w := cfg.Windows[0]
	if w.Duration != 4*time.Hour || !w.LeaveOpen || len(w.Open) != 2 || w.Open[0].Name != "ttlMonitorEnabled" || w.Open[0].Value != true ||
		w.Open[1].Value != int64(1) || w.Close[0].Value != false {
		t.Errorf("window: %+v", w)
	}
	scheds, wins := Describe(cfg, time.Now(), 5)
	if len(scheds) != 1 || len(scheds[0].Next) != 5 || len(wins) != 1 || len(wins[0].Next) != 5 {
		t.Errorf("Describe: %+v %+v", scheds, wins)
	}
}

func TestConfigErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("s3cret\n"), 0o600)
	sched := "schedules:\n  - name: a\n    cron: \"@daily\"\n    playbook: a.lua\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown top key", "listen: 127.0.0.1:1\nlisten_on: x\n", `wtd.yaml:2: unknown key "listen_on" in the config`},
		{"unknown schedule key", sched + "    every: 1h\n", `wtd.yaml:5: unknown key "every" in a schedule (allowed: catch_up, cron, name, params, playbook, timeout)`},
		{"bad cron", "schedules:\n  - name: a\n    cron: \"at noon\"\n    playbook: a.lua\n", `wtd.yaml:3: schedule a: cron "at noon"`},
		{"bad time zone", "schedules:\n  - name: a\n    cron: \"CRON_TZ=Mars/Olympus 0 1 * * *\"\n    playbook: a.lua\n", "wtd.yaml:3:"},
		{"bad size", "max_memory: lots\n", `wtd.yaml:1: max_memory: size "lots": want a positive number of bytes`},
		{"bad duration", sched + "    timeout: 2 hours\n", `wtd.yaml:5: schedule a timeout "2 hours" is not a duration`},
		{"no playbook", "schedules:\n  - name: a\n    cron: \"@daily\"\n", "wtd.yaml:2: schedule a: playbook is required"},
		{"twice", sched + "  - name: a\n    cron: \"@daily\"\n    playbook: b.lua\n", `wtd.yaml:5: schedule "a" is defined twice`},
		{"bad name", "schedules:\n  - name: a b\n    cron: \"@daily\"\n    playbook: a.lua\n", `wtd.yaml:2: schedule name "a b"`},
		{"nested param", sched + "    params: { x: { y: 1 } }\n", "wtd.yaml:5: schedule a params.x must be a number, boolean or string, got a mapping"},
		{"remote listen", "listen: 0.0.0.0:7070\n", "wtd.yaml:1: listen 0.0.0.0:7070 is not a loopback address: set allow_remote: true"},
		{"no connections", "api_max_connections: 0\n", "wtd.yaml:1: api_max_connections 0 must be at least 1"},
		{"connections not a number", "api_max_connections: many\n", `wtd.yaml:1: api_max_connections must be a whole number, got the string "many"`},
		{"remote without token", "listen: 0.0.0.0:7070\nallow_remote: true\n", "token_file is required"},
		{"remote window server", "windows:\n  - name: w\n    cron: \"@daily\"\n    duration: 1h\n    server: mongodb://10.1.2.3:27017\n    open: { setParameter: { a: 1 } }\n    close: { setParameter: { a: 0 } }\n", "wtd.yaml:5: window w server:"},
		{"window never closes", "windows:\n  - name: w\n    cron: \"@hourly\"\n    duration: 2h\n    server: mongodb://127.0.0.1:1\n    open: { setParameter: { a: 1 } }\n    close: { setParameter: { a: 0 } }\n", "wtd.yaml:4: window w: duration 2h0m0s is not shorter than the 1h0m0s between two openings"},
		{"window open not setParameter", "windows:\n  - name: w\n    cron: \"@daily\"\n    duration: 1h\n    server: mongodb://127.0.0.1:1\n    open: { eval: x }\n    close: { setParameter: { a: 0 } }\n", `wtd.yaml:6: unknown key "eval" in window w open`},
		{"yaml syntax", "schedules: [\n", "wtd.yaml: yaml:"},
		{"unknown results key", "results:\n  uri: mongodb://127.0.0.1:1\n  password: x\n", `wtd.yaml:3: unknown key "password" in results (allowed: database, token_file, uri)`},
		{"results without uri", "results:\n  database: wtd\n", "wtd.yaml:2: results: uri is required"},
		{"results not a mongodb uri", "results:\n  uri: http://u:hunter2@results:80\n", "wtd.yaml:2: results URI: scheme \"http\": want"},
		{"results token without user", "results:\n  uri: mongodb://results.example.net\n  token_file: token\n", "wtd.yaml:3: results token_file " + tok + ": the results URI names no user"},
		{"results password twice", "results:\n  uri: mongodb://wtd:pw@results.example.net\n  token_file: token\n", "wtd.yaml:3: results URI: it carries a password and token_file gives one too"},
		{"results bad database", "results:\n  uri: mongodb://results.example.net\n  database: a.b\n", `wtd.yaml:3: results database "a.b" is not a database name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(filepath.Join(dir, "wtd.yaml"), []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The results store is an output: another host, a replica set, TLS.
	res, err := ParseConfig(filepath.Join(dir, "wtd.yaml"), []byte("results:\n  uri: mongodb://wtd@db1.example.net:27017,db2.example.net:27017/?replicaSet=rs0&tls=true&authSource=admin\n  database: fleet\n  token_file: token\n"))
	if err != nil || res.Results.Database != "fleet" || res.Results.TokenFile != tok || !strings.Contains(res.Results.URI, "replicaSet=rs0&tls=true") {
		t.Errorf("results: %+v, %v", res.Results, err)
	}
	cfg, err := ParseConfig(filepath.Join(dir, "wtd.yaml"), []byte("listen: 0.0.0.0:7070\nallow_remote: true\ntoken_file: token\n"))
	if err != nil || cfg.Token != "s3cret" {
		t.Errorf("remote with a token: %+v, %v", cfg, err)
	}
}
