package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
)

// attachedStartup is the configuration the attached server of the tune
// tests is started with: values of the tuned knobs that are not the
// defaults, so that a restore to the defaults would be seen.
var attachedStartup = []string{"--wiredTigerEngineConfigString", "eviction_dirty_target=7,checkpoint=(wait=45)", "--syncdelay", "30"}

// attachedStartupValues are the knobs' values the server starts with.
var attachedStartupValues = map[string]float64{"eviction_dirty_target": 7, "checkpoint.wait": 45, "syncdelay": 30}

// tuneAttachedPlaybook searches three runtime knobs of a server wtd did
// not start: two WiredTiger keys (reconfigure) and a parameter.
const tuneAttachedPlaybook = `
local p = params{ uri = "", keep = false, confirm = 0 }
local m = mongod.connect{ uri = p.uri }
m:load{ ns = "k.c", docs = 3000, doc_bytes = 200 }
local r = tune{ server = m,
  knobs = { eviction_dirty_target = {2, 10}, ["checkpoint.wait"] = {10, 120}, syncdelay = {10, 120} },
  workload = { ns = "k.c", duration = 2, mix = { read = 1, update = 1 }, rate = 200 },
  objective = "p99", guard = { behind = 0 }, budget = { trials = 30 }, confirm = p.confirm, keep_best = p.keep }
print("verdict: " .. r.verdict)
print("kept: " .. tostring(r.kept))
`

// knobsInForce reads the tuned knobs' values in force on the server at
// uri, from the server's own answers: the WiredTiger keys of its startup
// configuration (getCmdLineOpts) overridden by those of the last runtime
// configuration it took (getParameter wiredTigerEngineRuntimeConfig),
// and syncdelay by getParameter; those of names.
func knobsInForce(t *testing.T, uri string, names ...string) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(uri + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	admin := c.Database("admin")
	var opts struct {
		Parsed struct {
			Storage struct {
				WiredTiger struct {
					EngineConfig struct {
						ConfigString string `bson:"configString"`
					} `bson:"engineConfig"`
				} `bson:"wiredTiger"`
			} `bson:"storage"`
		} `bson:"parsed"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}).Decode(&opts); err != nil {
		t.Fatal(err)
	}
	var params struct {
		Runtime   string  `bson:"wiredTigerEngineRuntimeConfig"`
		Syncdelay float64 `bson:"syncdelay"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: 1}, {Key: "syncdelay", Value: 1}}).Decode(&params); err != nil {
		t.Fatal(err)
	}
	out, err := hostctl.WTKnobValues(opts.Parsed.Storage.WiredTiger.EngineConfig.ConfigString)
	if err != nil {
		t.Fatal(err)
	}
	runtime, err := hostctl.WTKnobValues(params.Runtime)
	if err != nil {
		t.Fatalf("runtime configuration %q: %v", params.Runtime, err)
	}
	for k, v := range runtime {
		out[k] = v
	}
	out["syncdelay"] = params.Syncdelay
	want := map[string]float64{}
	for _, k := range names {
		if v, ok := out[k]; ok {
			want[k] = v
		}
	}
	return want
}

// tunedKnobs are the knobs tuneAttachedPlaybook searches.
var tunedKnobs = []string{"eviction_dirty_target", "checkpoint.wait", "syncdelay"}

// changeStates counts the recorded changes of run id by state.
func changeStates(t *testing.T, db string, id int64) map[string]int {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query("SELECT state, count(*) FROM changes WHERE run_id = ? GROUP BY state", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// TestKilledTuneLeavesNothingChanged: wtd run of a tune{} search over
// runtime knobs of a server wtd did not start (two WiredTiger keys and
// syncdelay) is killed with SIGKILL in its second trial, with the knobs
// changed; the next command (wtd runs) records the run aborted and puts
// every knob back: the server answers with its startup values again.
func TestKilledTuneLeavesNothingChanged(t *testing.T) {
	t.Parallel()
	srv := testbin.StartMinimongod(t, 0, attachedStartup...)
	if got := knobsInForce(t, srv.URI, tunedKnobs...); fmt.Sprint(got) != fmt.Sprint(attachedStartupValues) {
		t.Fatalf("the server starts with %v, want %v", got, attachedStartupValues)
	}
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	cmd, out := startWtd(t, state, "run", "--db", db, "--sample-interval", "0", writePlaybook(t, tuneAttachedPlaybook), "-p", "uri="+srv.URI)
	waitFor(t, out, "trial 2 (", 120*time.Second)
	time.Sleep(500 * time.Millisecond) // within trial 2's workload
	changed := knobsInForce(t, srv.URI, tunedKnobs...)
	if fmt.Sprint(changed) == fmt.Sprint(attachedStartupValues) {
		t.Fatalf("in trial 2 the knobs are still %v: the search changed nothing\n%s", changed, out)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := knobsInForce(t, srv.URI, tunedKnobs...); fmt.Sprint(got) != fmt.Sprint(changed) {
		t.Errorf("the knobs changed from %v to %v with wtd killed", changed, got)
	}
	if states := changeStates(t, db, 1); states[store.ChangePending] < 2 {
		t.Fatalf("changes recorded by the killed run: %v, want the trials' changes pending", states)
	}

	t.Logf("in trial 2 (wtd killed): %v, changes %v", changed, changeStates(t, db, 1))
	res := runCLI(t, map[string]string{"WTD_STATE_DIR": state}, "runs", "--db", db)
	status, reason, steps, _ := recorded(t, db, 1)
	if res.code != 0 || status != store.StatusAborted || !strings.Contains(reason, "killed or crashed") {
		t.Fatalf("after wtd runs (exit %d): %s %q\n%s%s", res.code, status, reason, res.stdout, res.stderr)
	}
	if len(steps) < 3 || !strings.HasPrefix(steps[len(steps)-1], "trial 2 ") || !strings.Contains(steps[len(steps)-1], "aborted") {
		t.Errorf("steps %q: want the load, the baseline, trial 1 and trial 2 aborted", steps)
	}
	if got := knobsInForce(t, srv.URI, tunedKnobs...); fmt.Sprint(got) != fmt.Sprint(attachedStartupValues) {
		t.Errorf("after wtd runs the knobs are %v, want the startup values %v back (they were %v)\n%s", got, attachedStartupValues, changed, res.stderr)
	}
	if states := changeStates(t, db, 1); states[store.ChangePending] != 0 || states[store.ChangeRestored] < 2 {
		t.Errorf("changes after wtd runs: %v, want all restored", states)
	}
}

// keepBestPlaybook searches the dirty eviction knobs of a server wtd did
// not start, started with a dirty target and trigger (1% and 2% of the
// cache) that push an update workload's threads into eviction, with
// keep_best = true; the objective is the time application threads spent
// evicting, which the search's ranges bring to nothing. It prints the
// best setting and whether it was kept.
const keepBestPlaybook = `
local p = params{ uri = "" }
local m = mongod.connect{ uri = p.uri }
m:load{ ns = "k.c", docs = 20000, doc_bytes = 2000 }
local r = tune{ server = m,
  knobs = { eviction_dirty_target = {5, 10}, eviction_dirty_trigger = {30, 50} },
  workload = { ns = "k.c", duration = 2, warmup = 0.5, threads = 4, mix = { update = 1 }, rate = 2000 },
  objective = "app-evict", guard = { behind = 0, p99_factor = 0 }, budget = { trials = 3 }, confirm = 4, keep_best = true }
print("verdict: " .. r.verdict)
print(string.format("best: %s %s", tostring(r.best and r.best.eviction_dirty_target), tostring(r.best and r.best.eviction_dirty_trigger)))
print("kept: " .. tostring(r.kept))
`

// TestKeepBestOnAnAttachedServerStays: tune{ keep_best = true } on a server
// wtd did not start leaves the best setting on it after the run when the
// confirmation found it better: the search's recorded changes are kept,
// not put back, wtd show says "kept by tune{} (keep_best)", and the next
// command (wtd runs) restores nothing. When the confirmation did not find
// it better, the server has its settings before the run back.
func TestKeepBestOnAnAttachedServerStays(t *testing.T) {
	t.Parallel()
	names := []string{"eviction_dirty_target", "eviction_dirty_trigger"}
	srv := testbin.StartMinimongod(t, 0, "--wiredTigerEngineConfigString", "eviction_dirty_target=1,eviction_dirty_trigger=2")
	startup := map[string]float64{"eviction_dirty_target": 1, "eviction_dirty_trigger": 2}
	if got := knobsInForce(t, srv.URI, names...); fmt.Sprint(got) != fmt.Sprint(startup) {
		t.Fatalf("the server starts with %v, want %v", got, startup)
	}
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	env := map[string]string{"WTD_STATE_DIR": state}
	res := runCLI(t, env, "run", "--db", db, "--sample-interval", "0", writePlaybook(t, keepBestPlaybook), "-p", "uri="+srv.URI)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var target, trigger float64
	var kept bool
	if i := strings.Index(res.stdout, "\nbest: ") + 1; i == 0 {
		t.Fatalf("no best setting printed:\n%s", res.stdout)
	} else if _, err := fmt.Sscanf(res.stdout[i:], "best: %g %g\nkept: %t", &target, &trigger, &kept); err != nil {
		t.Fatalf("output %q: %v", res.stdout[i:], err)
	}
	t.Logf("best eviction_dirty_target=%g eviction_dirty_trigger=%g, kept %t: %s", target, trigger, kept, res.stdout[strings.Index(res.stdout, "\nverdict: ")+1:])
	want := startup
	if kept {
		want = map[string]float64{"eviction_dirty_target": target, "eviction_dirty_trigger": trigger}
	}
	if got := knobsInForce(t, srv.URI, names...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the run (kept %t) the server has %v, want %v", kept, got, want)
	}
	states := changeStates(t, db, 1)
	show := runCLI(t, env, "show", "--db", db, "1")
	switch {
	case kept && (states[store.ChangePending] != 0 || states[store.ChangeKept] < 2 || !strings.Contains(show.stdout, ": kept by tune{} (keep_best)")):
		t.Errorf("kept: changes %v, want the search's kept and none pending; show:\n%s", states, show.stdout)
	case !kept && (states[store.ChangeKept] != 0 || strings.Contains(show.stdout, "keep_best")):
		t.Errorf("not kept: changes %v; show:\n%s", states, show.stdout)
	}
	if res := runCLI(t, env, "runs", "--db", db); res.code != 0 {
		t.Fatalf("runs: exit %d\n%s", res.code, res.stderr)
	}
	if got := knobsInForce(t, srv.URI, names...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after wtd runs the server has %v, want %v still", got, want)
	}
}
