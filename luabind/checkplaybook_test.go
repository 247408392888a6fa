package luabind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckPassesEveryPlaybook: each playbook of playbooks/ passes its
// check with its defaults, quickly, and the report says what it would do.
func TestCheckPassesEveryPlaybook(t *testing.T) {
	files, err := filepath.Glob("../playbooks/*.lua")
	if err != nil || len(files) < 9 {
		t.Fatalf("playbooks: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := CheckPlaybook(context.Background(), f, string(src), nil, CheckOptions{})
			if err != nil {
				t.Fatalf("check: %v", err)
			}
			if rep.Stopped != "" {
				t.Errorf("stopped before the end: %s", rep.Stopped)
			}
			if !rep.Declared || len(rep.Params) == 0 || len(rep.Servers) == 0 || len(rep.Steps) == 0 || len(rep.Calls) == 0 {
				t.Errorf("report %+v: want parameters, servers, steps and workloads", rep)
			}
			if rep.Took > 2*time.Second {
				t.Errorf("the check took %s", rep.Took)
			}
		})
	}
}

// TestCheckCacheSweepReport: what the check of cache_sweep.lua reports,
// with -p values: the server, its restarts, the steps and the calls.
func TestCheckCacheSweepReport(t *testing.T) {
	src, err := os.ReadFile("../playbooks/cache_sweep.lua")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckPlaybook(context.Background(), "cache_sweep.lua", string(src), map[string]string{"sizes": "0.25,1,2", "rounds": "2"}, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Servers) != 1 || rep.Servers[0].Settings != "cacheSizeGB=0.25" || rep.Servers[0].Restarts != 3 {
		t.Errorf("servers %+v: want m1 started with cacheSizeGB=0.25, restarted 3 times", rep.Servers)
	}
	want := []CheckedStep{{"load", 1}, {"reads 60 MB", 6}, {"reads all", 6}}
	if len(rep.Steps) != len(want) {
		t.Fatalf("steps %+v, want %+v", rep.Steps, want)
	}
	for i := range want {
		if rep.Steps[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, rep.Steps[i], want[i])
		}
	}
	if len(rep.Calls) != 2 || rep.Calls[0].Kind != "load" || rep.Calls[0].Detail != "600000 documents of 1000 bytes, 1 threads" ||
		rep.Calls[1].Count != 12 || rep.Calls[1].Detail != "20000 ops, 1 threads, read 1" {
		t.Errorf("calls %+v", rep.Calls)
	}
	if rep.DropCaches != 12 || rep.Tables != 1 {
		t.Errorf("drop_caches %d, tables %d; want 12, 1", rep.DropCaches, rep.Tables)
	}
	for _, p := range rep.Params {
		if p.Name == "rounds" && p.Value != 2.0 {
			t.Errorf("rounds = %v, want 2 (-p)", p.Value)
		}
	}
}

// TestCheckFindsCommonMistakes: the mistakes a new user makes are found by
// the check, after the line that loads 600 MB (which it never loads), with
// the message and line a run would give.
func TestCheckFindsCommonMistakes(t *testing.T) {
	const head = `local p = params{ docs = 600000, threads = 4 }
local m = mongod.start{ cacheSizeGB = 1 }
step{ name = "load", run = function() return m:load{ ns = "b.c", docs = p.docs, doc_bytes = 1000 } end }
`
	for _, tc := range []struct {
		name, line string
		overrides  map[string]string
		want       string
	}{
		{"typo in an option", `m:workload{ ns = "b.c", ops = 100, threds = p.threads }`, nil,
			`pb.lua:4: workload: unknown option "threds"; did you mean threads?`},
		{"wrong type", `m:workload{ ops = 100, mix = { read = "80%" } }`, nil,
			`pb.lua:4: workload: mix: read must be a number, got string "80%"`},
		{"unknown method", `m:worklaod{ ops = 100 }`, nil,
			`pb.lua:4: server m1 has no field "worklaod"; did you mean workload?`},
		{"undeclared -p", `m:workload{ ops = 100 }`, map[string]string{"doc": "5"},
			`pb.lua:1: params: unknown parameter "doc" (-p doc=...): the playbook's parameters are docs, threads; did you mean docs?`},
		{"missing argument", `m:set_parameter("syncdelay")`, nil, `pb.lua:4: bad argument #3 to set_parameter (value expected)`},
		{"wrong argument type", `sleep("ten")`, nil, `pb.lua:4: bad argument #1 to sleep (number expected, got string)`},
		{"unknown global", `stepp{ name = "reads", run = function() end }`, nil,
			`pb.lua:4: stepp is not defined (a call of an unknown global); did you mean step?`},
		{"unknown module function", `local m2 = mongod.strat{}`, nil, `pb.lua:4: mongod has no function "strat"; did you mean start?`},
		{"engine's range", `m:workload{ ops = 100, threads = 1000 }`, nil, `pb.lua:4: workload: run workload b.c: threads 1000 out of range [1, 256]`},
		{"knob out of range", `m:restart{ cacheSizeGB = 0.1 }`, nil, "pb.lua:4: restart m1: validate mongod settings: cacheSizeGB 0.1: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{"in a loop's last pass", `for i = 1, 3 do if i == 3 then m:workload{ ops = 100, distribution = "zipf" } end end`, nil,
			`pb.lua:4: workload: run workload b.c: distribution "zipf" is not one of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			_, err := CheckPlaybook(context.Background(), "pb.lua", head+tc.line+"\n", tc.overrides, CheckOptions{})
			wantContains(t, err, tc.want)
			if d := time.Since(began); d > time.Second {
				t.Errorf("the check took %s", d)
			}
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Errorf("error %T, want *ScriptError", err)
			}
		})
	}
}

// TestCheckResultsHaveTheirShape: what a playbook reads of results,
// handles and the clock works in a check as in a run; a mismatch fails the
// check through the Lua error of indexing nil, naming the expectation.
func TestCheckResultsHaveTheirShape(t *testing.T) {
	const src = `
local function expect(ok, what) if not ok then local none = nil; none[what] = 1 end end
local p = params{ docs = 1000 }
local m = mongod.start{ cacheSizeGB = 1, setParameter = { syncdelay = 30 } }
expect(m.name == "m1" and type(m.uri) == "string" and tostring(m):find("server m1", 1, true), "handle fields")
local l = step{ name = "load", run = function() return m:load{ ns = "b.c", docs = p.docs, doc_bytes = 500 } end }
expect(l.docs == 1000 and l.bytes == 500000 and l.errors == 0, "load result")
expect(m:collection_stats("b.c").count == 1000 and m:collection_stats("b.c").avg_obj_size == 500, "collection stats")
local t0 = os.time()
local r = step{ name = "mixed", run = function()
  return m:workload{ duration = 600, warmup = 5, mix = { read = 1, update = 1 }, watch = { "metrics.ttl.passes" } }
end }
expect(r.ops.read and r.ops.update and r.ops.insert == nil, "ops of the mix")
expect(r.total.count == 0 and r.total.p99_micros == 0 and #r.series == 0, "total and series")
expect(r.watch["metrics.ttl.passes"].max == 0 and r.warmup.by == "5s", "watch and warmup")
expect(r.next_insert_id == 1000, "next insert id")
expect(os.time() - t0 >= 605, "workload duration on the clock")
sleep(86400)
expect(os.time() - t0 >= 605 + 86400, "sleep on the clock")
expect(m:server_status().metrics.ttl.passes == 0, "serverStatus shape")
expect(m:command("serverStatus").wiredTiger ~= nil, "serverStatus by command")
expect(m:get_parameter("syncdelay") == 30 and m:set_parameter("syncdelay", 60) == 30, "parameters")
expect(m:create_index{ ns = "b.c", key = { {"a", 1}, {"b", -1} } } == "a_1_b_-1", "index name")
local steps = report.steps()
expect(#steps == 2 and steps[2].name == "mixed" and steps[2].status == "ok", "report.steps")
local dc = host.drop_caches()
expect(dc.dropped == false and dc.reason ~= "", "drop caches")
local f = io.open("notes.txt", "w"); f:write("x"); f:close()
local sw = sweep.threads{ workload = { ops = 100 }, threads = { 1, 2 } }
expect(#sw.points == 2 and type(sw.reason) == "string", "sweep result")
m:stop()
local ok = pcall(function() return m:workload{ ops = 1 } end)
expect(not ok, "a stopped server fails")
`
	began := time.Now()
	rep, err := CheckPlaybook(context.Background(), "pb.lua", src, nil, CheckOptions{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if rep.Stopped != "" {
		t.Fatalf("stopped: %s", rep.Stopped)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("a day of sleep took %s to check", d)
	}
	if rep.AtLeast != 605*time.Second+24*time.Hour {
		t.Errorf("at least %s, want 24h10m5s", rep.AtLeast)
	}
}

// TestCheckIsBounded: a playbook that never ends is stopped at the check's
// time bound and passes what ran; one that raises its own error (which may
// depend on measurements) stops the check without failing it; the text
// still decides a -p when the check stopped before params{}.
func TestCheckIsBounded(t *testing.T) {
	rep, err := CheckPlaybook(context.Background(), "pb.lua", "params{ n = 1 }\nwhile true do end\n", nil, CheckOptions{Timeout: 200 * time.Millisecond})
	if err != nil || !strings.Contains(rep.Stopped, "pb.lua:2: the check ran out of its time") {
		t.Errorf("endless loop: %v, stopped %q", err, rep.Stopped)
	}
	_, err = CheckPlaybook(context.Background(), "pb.lua", "while true do end\nparams{ n = 1 }\n", map[string]string{"m": "1"}, CheckOptions{Timeout: 200 * time.Millisecond})
	wantContains(t, err, `pb.lua:2: params: unknown parameter "m"`)
	rep, err = CheckPlaybook(context.Background(), "pb.lua", "local big = {}\nfor i = 1, 1e9 do big[i] = ('x'):rep(1000) .. i end\n", nil, CheckOptions{Memory: 32 << 20})
	if err != nil || !strings.Contains(rep.Stopped, "ran out of its memory") {
		t.Errorf("memory: %v, stopped %q", err, rep.Stopped)
	}
	rep, err = CheckPlaybook(context.Background(), "pb.lua", "local m = mongod.start{}\nlocal r = m:workload{ ns = 'a.b', ops = 5, mix = { insert = 1 }, doc_bytes = 100 }\nassert(r.total.count == 5, 'short')\nm:nosuch()\n", nil, CheckOptions{})
	if err != nil || !strings.Contains(rep.Stopped, "pb.lua:3: the playbook raised an error itself") {
		t.Errorf("own error: %v, stopped %q", err, rep.Stopped)
	}
}
