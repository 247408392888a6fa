package luabind

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/workload"
)

// tuneLoad is the small data set the tune tests search on.
const tuneLoad = `local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "d.c", docs = 20000, doc_bytes = 200 }
`

// tunings reads the run's searches back from its events, as wtd show does.
func (tr *testRun) tunings(t *testing.T) []record.Tuning {
	t.Helper()
	if err := tr.st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Load(context.Background(), tr.st, tr.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Tunings()
}

// TestTuneSearchesRecordsAndRestores: a search of three WiredTiger knobs
// records the baseline and every trial as steps and events, every trial
// keeps eviction_dirty_target < eviction_dirty_trigger, the verdict is
// recorded, and the server has its WiredTiger settings before the search
// back at the end.
func TestTuneSearchesRecordsAndRestores(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	src := tuneLoad + `local r = tune{ server = m,
  knobs = { eviction_dirty_target = {2, 10}, eviction_dirty_trigger = {5, 30}, ["checkpoint.wait"] = {10, 120, log = true} },
  workload = { ns = "d.c", duration = 1.5, threads = 2, mix = { read = 1, update = 3 }, rate = 300, warmup = 0.5 },
  objective = { measure = "p99", subject_to = { ["ops/s"] = "> 1" } },
  budget = { trials = 3, initial = 2 }, confirm = 1, seed = 7 }
print("verdict: " .. r.verdict)
print("trials: " .. #r.trials)
for _, t in ipairs(r.trials) do
  assert(t.settings.eviction_dirty_target < t.settings.eviction_dirty_trigger, "constraint broken in " .. t.name)
  assert(t.settings["checkpoint.wait"] == math.floor(t.settings["checkpoint.wait"]), "checkpoint.wait not whole")
  print(t.name .. " " .. t.status .. " " .. tostring(t.objective))
end
print("baseline: " .. r.baseline.eviction_dirty_target .. " " .. r.baseline.eviction_dirty_trigger .. " " .. r.baseline["checkpoint.wait"])
print("in force: " .. m:get_parameter("wiredTigerEngineRuntimeConfig"))
`
	if _, err := RunPlaybook(context.Background(), "tune.lua", src, tr.env(nil)); err != nil {
		t.Fatalf("%v\n--- output:\n%s--- events:\n%s", err, tr.out, tr.log)
	}
	out := tr.out.String()
	if !strings.Contains(out, "trials: 4\n") {
		t.Errorf("output %q: want the baseline and 3 trials", out)
	}
	base := regexp.MustCompile(`baseline: (\S+) (\S+) (\S+)`).FindStringSubmatch(out)
	if base == nil {
		t.Fatalf("no baseline in %q", out)
	}
	want := "eviction_dirty_target=" + base[1] + ",eviction_dirty_trigger=" + base[2] + ",checkpoint=(wait=" + base[3] + ")"
	if !strings.Contains(out, "in force: "+want+"\n") {
		t.Errorf("output %q: want the settings before the search back in force: %s", out, want)
	}
	var names []string
	for _, st := range tr.run.Steps() {
		names = append(names, st.Name)
	}
	if got := strings.Join(names[:4], ","); got != "baseline,trial 1,trial 2,trial 3" {
		t.Errorf("steps %v, want baseline and trial 1..3 first", names)
	}
	for _, st := range tr.run.Steps()[1:4] {
		lo, hi := st.Labels["eviction_dirty_target"], st.Labels["eviction_dirty_trigger"]
		if lo == nil || hi == nil || lo.(float64) >= hi.(float64) {
			t.Errorf("step %s labels %v: want the trial's settings with target < trigger", st.Name, st.Labels)
		}
	}
	ts := tr.tunings(t)
	if len(ts) != 1 || len(ts[0].Trials) < 4 || ts[0].Verdict == nil {
		t.Fatalf("tunings %+v: want one search with its 4 trials and a verdict", ts)
	}
	for i, trial := range ts[0].Trials[:4] {
		if trial.N != i || trial.Step == 0 || trial.Status == "" || (trial.Status == record.StatusOK && trial.Objective == nil) {
			t.Errorf("trial %d recorded as %+v", i, trial)
		}
	}
	if v := ts[0].Verdict.Verdict; !strings.HasPrefix(v, "best setting ") && !strings.HasPrefix(v, "no setting beat the baseline") {
		t.Errorf("verdict %q", v)
	}
}

// TestTuneGuardStopsExplodingP99AndDeadServer: a trial whose p99 passes 4
// times the baseline's (the server frozen for 1.5 s: a second's p99 of a
// second or more, where a busy host's baseline is 100 ms at worst) is stopped early by
// the guard, and one whose server is killed is recorded failed; the server
// is started again and the search goes on to its budget.
func TestTuneGuardStopsExplodingP99AndDeadServer(t *testing.T) {
	tr := newTestRun(t, withServer(t))
	src := tuneLoad + `local r = tune{ server = m,
  knobs = { ["file_manager.close_idle_time"] = {1000, 100000} },
  workload = { ns = "d.c", duration = 4, threads = 2, mix = { read = 1, update = 1 }, rate = 300, warmup = 1 },
  objective = "p99", guard = { behind = 0, p99_factor = 4 }, budget = { trials = 3 }, confirm = 0 }
for _, t in ipairs(r.trials) do print(t.name .. ": " .. t.status .. ": " .. (t.reason or "")) end
`
	errc := make(chan error, 1)
	go func() {
		_, err := RunPlaybook(context.Background(), "guard.lua", src, tr.env(nil))
		errc <- err
	}()
	waitStep := func(name string) {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.HasPrefix(tr.run.CurrentStep(), name) {
				return
			}
		}
		t.Fatalf("step %s did not start within 90 s\n%s", name, tr.log)
	}
	waitStep("trial 1")
	time.Sleep(2 * time.Second) // past the warm-up
	pid := tr.run.Servers()[0].PID()
	syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(1500 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGCONT)
	waitStep("trial 2")
	time.Sleep(time.Second)
	if err := syscall.Kill(tr.run.Servers()[0].PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("%v\n--- output:\n%s--- events:\n%s", err, tr.out, tr.log)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("the search still runs 120 s after the kill")
	}
	ts := tr.tunings(t)
	if len(ts) != 1 || len(ts[0].Trials) != 4 {
		t.Fatalf("tunings %+v: want the baseline and 3 trials", ts)
	}
	t1, t2, t3 := ts[0].Trials[1], ts[0].Trials[2], ts[0].Trials[3]
	if t1.Status != record.StatusFailed || !strings.Contains(t1.Reason, "guard: p99 ") {
		t.Errorf("trial 1 %s %q: want failed by the p99 guard (baseline p99 %s ms)", t1.Status, t1.Reason, compare.FormatValue(ts[0].Trials[0].Objective))
	}
	var d1 time.Duration
	for _, st := range tr.run.Steps() {
		if st.Seq == t1.Step {
			d1 = st.End.Sub(st.Start)
		}
	}
	if d1 <= 0 || d1 >= 4800*time.Millisecond {
		t.Errorf("trial 1 lasted %s: want it stopped before its 5 s", d1)
	}
	if t2.Status != record.StatusFailed || !strings.Contains(t2.Reason, "server m1 exited (killed by signal 9, SIGKILL)") {
		t.Errorf("trial 2 %s %q: want failed because the server was killed", t2.Status, t2.Reason)
	}
	// Trial 3 ran on the server started again (a guard may still judge it).
	if t3.Step == 0 || strings.Contains(t3.Reason, "server m1") || strings.Contains(t3.Reason, "not taken") {
		t.Errorf("trial 3 %s %q: want measured on the server started again", t3.Status, t3.Reason)
	}
	if !strings.Contains(tr.log.String(), "server m1 started again and warmed up") {
		t.Errorf("no warm-up after the restart in the events:\n%s", tr.log)
	}
}

// TestTuneKnobWithoutEffectIsNoImprovement: a knob that cannot change a
// two-second workload (how long idle file handles stay open) gives the
// verdict that no setting beat the baseline, after confirmation rounds.
func TestTuneKnobWithoutEffectIsNoImprovement(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	src := tuneLoad + `local r = tune{ server = m,
  knobs = { ["file_manager.close_idle_time"] = {1000, 100000} },
  workload = { ns = "d.c", duration = 2.5, threads = 2, mix = { read = 3, update = 1 }, rate = 300, warmup = 0.5 },
  objective = "p99", budget = { trials = 2 }, confirm = 3 }
print("verdict: " .. r.verdict)
print("confirm: " .. #r.confirm)
`
	if _, err := RunPlaybook(context.Background(), "noeffect.lua", src, tr.env(nil)); err != nil {
		t.Fatalf("%v\n--- output:\n%s--- events:\n%s", err, tr.out, tr.log)
	}
	out := tr.out.String()
	if !strings.Contains(out, "verdict: no setting beat the baseline beyond noise") {
		t.Errorf("output %q: want no improvement", out)
	}
	ts := tr.tunings(t)
	if len(ts) != 1 || ts[0].Verdict == nil || ts[0].Verdict.Kept {
		t.Fatalf("tunings %+v", ts)
	}
	// When a trial measured better than the baseline the rounds ran, best and baseline by turns.
	if !strings.Contains(out, "confirm: 0\n") {
		var order []string
		for _, st := range tr.run.Steps() {
			if st.Name == "confirm" {
				order = append(order, st.Labels["setting"].(string))
			}
		}
		if got := strings.Join(order, ","); got != "best,baseline,baseline,best,best,baseline" {
			t.Errorf("confirmation order %s", got)
		}
	}
}

// TestTuneRefusesBadOptions: unknown keys, knobs and values are refused
// before anything runs, naming what is allowed.
func TestTuneRefusesBadOptions(t *testing.T) {
	tr := newTestRun(t, withServer(t))
	cases := []struct{ opts, want string }{
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", budgt = {}`, `tune: unknown option "budgt"; did you mean budget?`},
		{`knobs = { eviction_dirt_target = {1, 10} }, objective = "p99"`, `no knob "eviction_dirt_target": tune turns cacheSizeGB, eviction_target`},
		{`knobs = { eviction_dirty_target = {0, 10} }, objective = "p99"`, `eviction_dirty_target 0: Value too small for key 'eviction_dirty_target' the minimum is 1`},
		{`knobs = { cacheSizeGB = {0.1, 1} }, objective = "p99"`, `cacheSizeGB 0.1: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25`},
		{`knobs = { ["eviction.threads_max"] = {1, 8} }, objective = "p99"`, `eviction.threads_max down to 1 would break eviction.threads_min <= eviction.threads_max`},
		{`knobs = { enableMajorityReadConcern = {0, 1} }, objective = "p99"`, `enableMajorityReadConcern is a bool knob: tune searches numbers only`},
		{`knobs = { eviction_dirty_target = {10, 1} }, objective = "p99"`, `eviction_dirty_target {10, 1}: want {low, high} with low < high`},
		{`knobs = { eviction_dirty_target = {1, 10, lg = true} }, objective = "p99"`, `knobs.eviction_dirty_target: unknown option "lg"`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "latency"`, `unknown measure "latency": want one of ops/s, p50, p99`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "cache-peak"`, `cache-peak is neither better higher nor lower`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = { measure = "p99", subject_to = { p99 = "under 20" } }`, `p99 "under 20": want an order and a number`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", budget = { trials = 0 }`, `budget: trials 0 out of range [1, 500]`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", budget = { time = "soon" }`, `budget: time "soon": want seconds or a duration`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", guard = { p99_factor = 0.5 }`, `guard: p99_factor 0.5: want more than 1`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", confirm = -1`, `confirm -1 out of range [0, 50]`},
		{`knobs = { eviction_dirty_target = {1, 10} }, objective = "p99", warm_up = -1`, `warm_up -1 seconds out of range [0, 3600]`},
	}
	var src strings.Builder
	src.WriteString(tuneLoad)
	for _, c := range cases {
		src.WriteString(`print("ERR " .. select(2, pcall(tune, { server = m, workload = { ns = "d.c", duration = 1 }, ` + c.opts + ` })))` + "\n")
	}
	if _, err := RunPlaybook(context.Background(), "bad.lua", src.String(), tr.env(nil)); err != nil {
		t.Fatalf("%v\n%s", err, tr.log)
	}
	lines := strings.Split(strings.TrimSpace(tr.out.String()), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d lines for %d cases:\n%s", len(lines), len(cases), tr.out)
	}
	for i, c := range cases {
		if !strings.Contains(lines[i], c.want) {
			t.Errorf("tune{%s}:\n got %s\nwant %s", c.opts, lines[i], c.want)
		}
	}
	if n := len(tr.run.Steps()); n != 0 {
		t.Errorf("%d steps ran, want none", n)
	}
}

// TestTuneWarmsUpBeforeTheBaseline: warm_up seconds of the workload run,
// unmeasured and in no step, between the start of the search and the
// baseline: the server counts their updates, which no step recorded.
func TestTuneWarmsUpBeforeTheBaseline(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	src := tuneLoad + `local before = m:server_status().opcounters.update
local r = tune{ server = m, knobs = { eviction_dirty_target = {2, 10} }, objective = "p99",
  workload = { ns = "d.c", duration = 1, mix = { update = 1 }, rate = 300 },
  warm_up = 2, budget = { trials = 1 }, confirm = 0 }
print("updates: " .. (m:server_status().opcounters.update - before))
`
	if _, err := RunPlaybook(context.Background(), "warm.lua", src, tr.env(nil)); err != nil {
		t.Fatalf("%v\n--- output:\n%s--- events:\n%s", err, tr.out, tr.log)
	}
	var start, warmed time.Time
	if err := tr.st.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	events, err := tr.st.Events(context.Background(), tr.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		switch {
		case strings.HasPrefix(ev.Message, "search 1: "):
			start = ev.TS
		case strings.HasPrefix(ev.Message, "server m1 warmed up before the baseline (2s of the workload, not measured)"):
			warmed = ev.TS
		}
	}
	steps := tr.run.Steps()
	if start.IsZero() || warmed.IsZero() || len(steps) != 2 || steps[0].Name != "baseline" {
		t.Fatalf("search started %v, warmed up %v, steps %d: want both events and the baseline first\n%s", start, warmed, len(steps), tr.log)
	}
	// The times are recorded to the millisecond, and the workload's own
	// clock starts a little after the event's.
	if gap := steps[0].Start.Sub(start); gap < 1950*time.Millisecond {
		t.Errorf("the baseline started %s after the search: want the 2 s warm-up before it", gap)
	}
	if warmed.After(steps[0].Start) {
		t.Errorf("the warm-up ended at %v, after the baseline started at %v", warmed, steps[0].Start)
	}
	var measured float64
	for _, st := range steps {
		if wr, ok := st.Result.(workload.Result); ok {
			measured += float64(wr.Total.Count)
		}
	}
	var updates float64
	if _, err := fmt.Sscanf(tr.out.String()[strings.Index(tr.out.String(), "updates: "):], "updates: %g", &updates); err != nil {
		t.Fatalf("output %q: %v", tr.out, err)
	}
	t.Logf("the server counted %.0f updates, the steps %.0f", updates, measured)
	// 2 s at 300 ops/s: about 600 updates beyond the steps' own.
	if measured == 0 || updates-measured < 400 {
		t.Errorf("the server counted %.0f updates, the steps %.0f: want about 600 more, the warm-up's", updates, measured)
	}
}

// TestTuneBaselineCountsTheRunsReconfigures: WiredTiger cannot be asked
// for its configuration, so the values in force before a search are the
// startup configuration's, then the run's own reconfigures since: with
// eviction threads_min lowered to 1 at runtime, a search of threads_max
// down to 1 is allowed (threads_min <= threads_max holds), its trials go
// down to 1, and the baseline put back at the end is threads_max 4.
func TestTuneBaselineCountsTheRunsReconfigures(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	src := tuneLoad + `m:reconfigure("eviction=(threads_min=1)")
local r = tune{ server = m, knobs = { ["eviction.threads_max"] = {1, 3} }, objective = "p99",
  workload = { ns = "d.c", duration = 1, mix = { update = 1 }, rate = 300 },
  budget = { trials = 3, initial = 3 }, confirm = 0, seed = 3 }
print("baseline: " .. r.baseline["eviction.threads_max"])
local low = 99
for _, t in ipairs(r.trials) do low = math.min(low, t.settings["eviction.threads_max"]) end
print("lowest: " .. low)
print("in force: " .. m:get_parameter("wiredTigerEngineRuntimeConfig"))
`
	if _, err := RunPlaybook(context.Background(), "reconf.lua", src, tr.env(nil)); err != nil {
		t.Fatalf("%v\n--- output:\n%s--- events:\n%s", err, tr.out, tr.log)
	}
	out := tr.out.String()
	t.Logf("output:\n%s", out)
	if !strings.Contains(out, "baseline: 4\n") {
		t.Errorf("output %q: want the baseline threads_max 4", out)
	}
	if !strings.Contains(out, "in force: eviction=(threads_max=4)\n") {
		t.Errorf("output %q: want threads_max 4 put back", out)
	}
}
