package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/internal/testbin"
)

// TestCheckEveryPlaybook: every playbook of playbooks/ passes wtd check
// with its defaults (exit 0, a summary), in text and in JSON.
func TestCheckEveryPlaybook(t *testing.T) {
	files, err := filepath.Glob("../../playbooks/*.lua")
	if err != nil || len(files) < 8 {
		t.Fatalf("playbooks: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			began := time.Now()
			res := runCLI(t, nil, "check", f)
			took := time.Since(began)
			t.Logf("wtd check %s: %s", filepath.Base(f), took.Round(time.Millisecond))
			if res.code != 0 || !strings.Contains(res.stdout, f+": ok") || !strings.Contains(res.stdout, "\nservers:\n  m1  mongod.") ||
				!strings.Contains(res.stdout, "\nsteps: ") || strings.Contains(res.stdout, "checked up to") {
				t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			if took > 2*time.Second {
				t.Errorf("wtd check took %s", took)
			}
			res = runCLI(t, nil, "check", "--json", f)
			var out struct {
				OK      bool                  `json:"ok"`
				Params  []map[string]any      `json:"params"`
				Steps   []struct{ Count int } `json:"steps"`
				Servers []map[string]any      `json:"servers"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil || res.code != 0 || !out.OK || len(out.Params) == 0 ||
				len(out.Steps) == 0 || len(out.Servers) == 0 {
				t.Errorf("--json: exit %d, %v: %+v\n%s", res.code, err, out, res.stdout)
			}
		})
	}
}

// TestCheckCacheSweepSummary: the summary of cache_sweep.lua with -p.
func TestCheckCacheSweepSummary(t *testing.T) {
	res := runCLI(t, nil, "check", "../../playbooks/cache_sweep.lua", "-p", "sizes=0.25,1", "-p", "rounds=1")
	for _, want := range []string{
		"  sizes = 0.25,1  (-p; default 0.25,2)\n",
		"  rounds = 1  (-p; default 3)\n",
		"  docs = 600000\n",
		"  m1  mongod.start cacheSizeGB=0.25 (restarted 2 times)\n",
		"steps: 5\n  load x1, reads 60 MB x2, reads all x2\n",
		"  m1 load bench.c: 600000 documents of 1000 bytes, 1 threads\n",
		"  m1 workload bench.c x4: 20000 ops, 1 threads, read 1\n",
		"also: host.drop_caches 4 times, report.table once\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.stdout)
		}
	}
	if res.code != 0 {
		t.Errorf("exit %d: %s", res.code, res.stderr)
	}
}

// TestCheckFindsMistakesAndActsOnNothing: the six common mistakes exit 2
// with their message and line; the check starts no server (the server
// binary given would leave a mark if it ran), writes nothing in the state
// directory or beside the playbook, and records nothing.
func TestCheckFindsMistakesAndActsOnNothing(t *testing.T) {
	wtd := testbin.Wtd(t)
	dir, state := t.TempDir(), t.TempDir()
	mark := filepath.Join(dir, "server-ran")
	fake := filepath.Join(dir, "mongod")
	os.WriteFile(fake, []byte("#!/bin/sh\ntouch "+mark+"\nexec sleep 60\n"), 0o755)
	const head = `local p = params{ docs = 600000, threads = 4 }
local m = mongod.start{ cacheSizeGB = 1 }
host.drop_caches()
step{ name = "load", run = function() return m:load{ ns = "b.c", docs = p.docs, doc_bytes = 1000 } end }
local f = io.open("notes.txt", "w"); f:write("x"); f:close()
`
	for _, tc := range []struct {
		name, line string
		args       []string
		want       string
	}{
		{"fine", `m:workload{ ops = 100, threads = p.threads }`, nil, ""},
		{"typo in an option", `m:workload{ ops = 100, threds = p.threads }`, nil, `pb.lua:6: workload: unknown option "threds"; did you mean threads?`},
		{"wrong type", `m:workload{ ops = 100, mix = { read = "80%" } }`, nil, `pb.lua:6: workload: mix: read must be a number, got string "80%"`},
		{"unknown method", `m:worklaod{ ops = 100 }`, nil, `pb.lua:6: server m1 has no field "worklaod"; did you mean workload?`},
		{"undeclared -p", `m:workload{ ops = 100 }`, []string{"-p", "thread=8"}, `pb.lua:1: params: unknown parameter "thread" (-p thread=...): the playbook's parameters are docs, threads; did you mean threads?`},
		{"wrong argument", `m:set_parameter("syncdelay")`, nil, `pb.lua:6: bad argument #3 to set_parameter (value expected)`},
		{"unknown global", `stepp{ name = "x", run = function() end }`, nil, `pb.lua:6: stepp is not defined (a call of an unknown global); did you mean step?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := filepath.Join(dir, "pb.lua")
			os.WriteFile(pb, []byte(head+tc.line+"\n"), 0o644)
			cmd := exec.Command(wtd, append([]string{"check", pb}, tc.args...)...)
			cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+state, "WTD_MONGOD="+fake)
			began := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(began)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			switch {
			case tc.want == "" && (code != 0 || !strings.Contains(string(out), pb+": ok")):
				t.Errorf("exit %d, want 0:\n%s", code, out)
			case tc.want != "" && (code != 2 || !strings.Contains(string(out), tc.want)):
				t.Errorf("exit %d, want 2 and %q:\n%s", code, tc.want, out)
			}
			if took > time.Second {
				t.Errorf("wtd check took %s", took)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("wtd check ran the server binary")
			}
			for _, d := range []string{state, dir} {
				entries, _ := os.ReadDir(d)
				for _, e := range entries {
					if n := e.Name(); n != "pb.lua" && n != "mongod" {
						t.Errorf("wtd check wrote %s in %s", n, d)
					}
				}
			}
		})
	}
}

// TestRunRefusesBeforeRecording: wtd run checks the playbook first: a
// typo after a 600 MB load fails in well under a second, before the
// load, with no run recorded and no server started.
func TestRunRefusesBeforeRecording(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	st := openDB(t, db) // the database exists: nothing is added to it
	pb := writePlaybook(t, `local p = params{ docs = 600000 }
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "bench.c", docs = p.docs, doc_bytes = 1000 } end }
m:restart{ cacheSizeGB = 1 }
step{ name = "reads", run = function() return m:workload{ ns = "bench.c", ops = 20000, threds = 4 } end }
`)
	began := time.Now()
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, pb)
	took := time.Since(began)
	t.Logf("wtd run refused in %s", took.Round(time.Millisecond))
	if res.code != 2 || !strings.Contains(res.stderr, pb+`:5: workload: unknown option "threds"; did you mean threads?`) {
		t.Errorf("exit %d, want 2 and the typo:\n%s%s", res.code, res.stdout, res.stderr)
	}
	if took > time.Second {
		t.Errorf("the refusal took %s", took)
	}
	if strings.Contains(res.stderr, "mongod.start runs") || len(serverPIDs(res.stdout)) > 0 {
		t.Errorf("a server was started:\n%s%s", res.stdout, res.stderr)
	}
	runs, err := st.ListRuns(context.Background(), 10)
	if err != nil || len(runs) != 0 {
		t.Errorf("runs recorded after a failed check: %d (%v)", len(runs), err)
	}
}

// TestDaemonCheckChecksPlaybooks: wtd daemon --check runs the check of
// every schedule's playbook with its params: a params: key the playbook
// does not declare is refused, naming it and the declared ones, and so is
// a mistake anywhere in the playbook.
func TestDaemonCheckChecksPlaybooks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "quick.lua"), []byte(quickPlaybook), 0o644)
	os.WriteFile(filepath.Join(dir, "typo.lua"), []byte(strings.Replace(quickPlaybook, "ops = 2000", "ops = 2000, threds = 2", 1)), 0o644)
	for _, tc := range []struct{ schedule, want string }{
		{"    playbook: quick.lua\n    params: { dcos: 1, thread: 2 }\n",
			`bad.yaml:2: schedule a: ` + filepath.Join(dir, "quick.lua") + `:2: params: unknown parameters "dcos", "thread" (-p dcos=..., -p thread=...): the playbook's parameters are docs`},
		{"    playbook: typo.lua\n", `typo.lua:5: workload: unknown option "threds"; did you mean threads?`},
	} {
		bad := filepath.Join(dir, "bad.yaml")
		os.WriteFile(bad, []byte("schedules:\n  - name: a\n    cron: \"@daily\"\n"+tc.schedule), 0o644)
		res := runCLI(t, nil, "daemon", "--check", "--config", bad)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("daemon --check: exit %d, want 2 and %q\n%s", res.code, tc.want, res.stderr)
		}
	}
}
