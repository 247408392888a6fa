package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"wtd/engine/record"
	"wtd/engine/store"
)

// The proof's server, data and workload, the same in its three runs: a
// 0.25 GB cache under 300 MB of documents, an open loop of updates at
// 2,000 a second (where the dirty-data thresholds and the eviction
// threads move p99: at 1,000 a second of a read/update mix they barely do),
// after a minute of the workload so that the load's dirty data is gone.
const proofSetup = `
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "p.c", docs = 300000, doc_bytes = 1000, threads = 2 } end }
local W = { ns = "p.c", duration = 20, warmup = 2, rate = 2000, threads = 4, mix = { update = 10 } }
m:reconfigure("eviction=(threads_min=1)")
local function set(t, g, th)
  m:reconfigure(string.format("eviction_dirty_target=%d,eviction_dirty_trigger=%d,eviction=(threads_max=%d)", t, g, th))
end
step{ name = "warm-up", run = function() return m:workload{ ns = W.ns, duration = 60, rate = W.rate, threads = W.threads, mix = W.mix } end }
`

// proofGrid measures each of 4 x 3 x 4 = 48 settings (every dirty target
// below every dirty trigger) once, in an order
// shuffled with a fixed seed (so that drift is not read as a knob's
// effect).
const proofGrid = proofSetup + `
local points = {}
for _, t in ipairs{ 5, 10, 20, 30 } do for _, g in ipairs{ 35, 50, 70 } do for _, th in ipairs{ 1, 4, 8, 16 } do
  points[#points + 1] = { t, g, th }
end end end
local seed = 12345
for i = #points, 2, -1 do
  seed = (seed * 1103515245 + 12345) % 2147483648
  local j = seed % i + 1
  points[i], points[j] = points[j], points[i]
end
for _, pt in ipairs(points) do
  set(pt[1], pt[2], pt[3])
  step{ name = "grid", eviction_dirty_target = pt[1], eviction_dirty_trigger = pt[2], ["eviction.threads_max"] = pt[3],
        run = function() return m:workload(W) end }
end
`

// proofTune searches the grid's ranges with 12 trials and 5
// confirmation rounds.
const proofTune = proofSetup + `
local r = tune{ server = m, knobs = { eviction_dirty_target = {5, 30}, eviction_dirty_trigger = {35, 70}, ["eviction.threads_max"] = {1, 16} },
  workload = W, objective = "p99", budget = { trials = 12 }, confirm = 5, warm_up = 5 }
print("verdict: " .. r.verdict)
`

// proofCompare runs the baseline, tune's best and the grid's best by
// turns, five rounds each (the order rotated each round, so that drift
// favours none), for wtd compare --by setting.
const proofCompare = proofSetup + `
local p = params{ base = "", tune = "", grid = "" }
local function parse(s) local v = {} for n in s:gmatch("[^,]+") do v[#v + 1] = tonumber(n) end return v end
local settings = { baseline = parse(p.base), tune = parse(p.tune), grid = parse(p.grid) }
local orders = { { "baseline", "tune", "grid" }, { "grid", "baseline", "tune" }, { "tune", "grid", "baseline" } }
for round = 1, 5 do
  for _, name in ipairs(orders[(round - 1) % 3 + 1]) do
    local s = settings[name]
    set(s[1], s[2], s[3])
    step{ name = "round", setting = name, round = round, run = function() return m:workload(W) end }
  end
end
`

// proofKnobs are the grid's knobs, in the order the playbooks give them.
var proofKnobs = []string{"eviction_dirty_target", "eviction_dirty_trigger", "eviction.threads_max"}

// TestTuneProof is the proof of tune{} on minimongod (about 45 minutes,
// so only with WTD_TUNE_PROOF=1, and -timeout 90m): a grid of 48 settings
// of three eviction knobs, each measured once; tune{} over
// the same ranges with 12 trials and 5 confirmation rounds; and a third
// run of the baseline, tune's best and the grid's best by turns, compared
// by wtd compare --by setting. It logs both tables and checks that tune's
// best p99 is within 10% of the grid's best setting's, the two measured by
// turns in the third run (the grid's single lowest figure is logged too:
// the lowest of 48 noisy values is biased low), and that its
// verdict agrees with wtd compare's of tune's best against the baseline.
func TestTuneProof(t *testing.T) {
	if os.Getenv("WTD_TUNE_PROOF") != "1" {
		t.Skip("the proof of tune{} takes about 45 minutes: WTD_TUNE_PROOF=1 go test ./cmd/wtd -run TestTuneProof -timeout 90m -v")
	}
	_, mm := binaries(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wtd.db")
	env := map[string]string{"WTD_STATE_DIR": filepath.Join(dir, "state")}
	run := func(name, src string, params ...string) *record.Record {
		args := append([]string{"run", "--db", db, "--mongod", mm, writePlaybook(t, src)}, params...)
		res := runCLI(t, env, args...)
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", name, res.code, res.stdout, res.stderr)
		}
		st, err := store.OpenExisting(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close(context.Background())
		runs, err := st.ListRuns(context.Background(), 1)
		if err != nil || len(runs) == 0 {
			t.Fatalf("runs: %v", err)
		}
		rec, err := record.Load(context.Background(), st, runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	p99 := func(st record.StepRecord) float64 {
		if m := record.MeasuresOf(st); m.P99Micros != nil {
			return *m.P99Micros / 1000
		}
		return -1
	}
	setting := func(get func(string) float64) string {
		var parts []string
		for _, k := range proofKnobs {
			parts = append(parts, fmt.Sprintf("%g", get(k)))
		}
		return strings.Join(parts, ",")
	}

	grid := run("grid", proofGrid)
	type point struct {
		set string
		p99 float64
	}
	var points []point
	for _, st := range grid.Steps {
		if st.Name == "grid" && st.Status == record.StatusOK {
			points = append(points, point{setting(func(k string) float64 { v, _ := st.Labels[k].(float64); return v }), p99(st)})
		}
	}
	sort.Slice(points, func(i, j int) bool { return points[i].p99 < points[j].p99 })
	var table strings.Builder
	fmt.Fprintf(&table, "grid (run %d), by p99: eviction_dirty_target,eviction_dirty_trigger,eviction.threads_max  p99 ms\n", grid.Run.ID)
	for _, p := range points {
		fmt.Fprintf(&table, "  %-12s %8.2f\n", p.set, p.p99)
	}
	t.Log(table.String())
	if len(points) != 48 {
		t.Fatalf("%d grid points measured, want 48", len(points))
	}
	gridBest := points[0]

	tuned := run("tune", proofTune)
	tn := tuned.Tunings()
	if len(tn) != 1 || tn[0].Verdict == nil {
		t.Fatalf("tunings %+v", tn)
	}
	v := tn[0].Verdict
	table.Reset()
	fmt.Fprintf(&table, "tune (run %d): trial  settings  p99 ms  status\n", tuned.Run.ID)
	var bestRounds []float64
	for _, tr := range tn[0].Trials {
		obj := -1.0
		if tr.Objective != nil {
			obj = *tr.Objective
		}
		fmt.Fprintf(&table, "  %-16s %-12s %8.2f  %s %s\n", tr.Name, setting(func(k string) float64 { return tr.Settings[k] }), obj, tr.Status, tr.Reason)
		if tr.Name == "confirm best" && tr.Objective != nil {
			bestRounds = append(bestRounds, *tr.Objective)
		}
	}
	fmt.Fprintf(&table, "  verdict: %s\n", v.Verdict)
	t.Log(table.String())
	if v.Best == nil {
		t.Fatalf("tune found no best setting: %s", v.Verdict)
	}
	tuneBest := setting(func(k string) float64 { return v.Best[k] })
	base := setting(func(k string) float64 { return v.Baseline[k] })
	tuneConfirmed := record.Summarise(bestRounds).Median

	cmp := run("compare", proofCompare, "-p", "base="+base, "-p", "tune="+tuneBest, "-p", "grid="+gridBest.set)
	res := runCLI(t, env, "compare", "--db", db, fmt.Sprint(cmp.Run.ID), "--by", "setting", "--json")
	if res.code != 0 {
		t.Fatalf("compare: exit %d\n%s", res.code, res.stderr)
	}
	text := runCLI(t, env, "compare", "--db", db, fmt.Sprint(cmp.Run.ID), "--by", "setting")
	t.Logf("wtd compare %d --by setting:\n%s", cmp.Run.ID, text.stdout)
	var docs []struct {
		Steps []struct {
			Value    string
			Measures []struct {
				Measure   string
				A, B      *float64
				ChangePct *float64 `json:"change_pct"`
				P         *float64
				Verdict   string
			}
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &docs); err != nil || len(docs) != 1 {
		t.Fatalf("compare --json: %v\n%s", err, res.stdout)
	}
	byValue := map[string]string{}
	medians := map[string]float64{}
	for _, row := range docs[0].Steps {
		for _, m := range row.Measures {
			if m.Measure == "p99 ms" {
				byValue[row.Value] = m.Verdict
				if m.A != nil && m.B != nil {
					medians["baseline"], medians[row.Value] = *m.A, *m.B
				}
			}
		}
	}
	tuneSaysBetter := strings.HasPrefix(v.Verdict, "best setting ") && !strings.Contains(v.Verdict, "not confirmed")
	compareSaysBetter := byValue["tune"] == "faster"
	// The grid's best is the lowest of 48 single measurements, so its
	// figure is biased low by the noise it was picked from; the fair
	// reference is the grid's best setting measured again, by turns with
	// tune's best, in the compare run. Both figures are logged.
	oneShot := tuneConfirmed <= 1.1*gridBest.p99
	t.Logf("grid best %s: p99 %.2f ms (measured once); tune best %s: p99 %.2f ms (median of %d confirmation rounds): %.1f%% of the grid's best, within 10%%: %t",
		gridBest.set, gridBest.p99, tuneBest, tuneConfirmed, len(bestRounds), 100*tuneConfirmed/gridBest.p99, oneShot)
	gridAgain, tuneAgain := medians["grid"], medians["tune"]
	within := gridAgain > 0 && tuneAgain <= 1.1*gridAgain
	t.Logf("by turns in the compare run: tune best p99 %.2f ms, grid best p99 %.2f ms: %.1f%% of the grid's best, within 10%%: %t",
		tuneAgain, gridAgain, 100*tuneAgain/gridAgain, within)
	t.Logf("compare run: p99 medians %v; tune vs baseline: %s, grid vs baseline: %s", medians, byValue["tune"], byValue["grid"])
	t.Logf("tune's verdict says better: %t; wtd compare says tune's best is faster than the baseline: %t; they agree: %t",
		tuneSaysBetter, compareSaysBetter, tuneSaysBetter == compareSaysBetter)
	if !within {
		t.Errorf("tune's best p99 %.2f ms is not within 10%% of the grid's best %.2f ms, measured by turns", tuneAgain, gridAgain)
	}
	if tuneSaysBetter != compareSaysBetter {
		t.Errorf("tune's verdict %q disagrees with wtd compare's %q of tune's best against the baseline", v.Verdict, byValue["tune"])
	}
}
