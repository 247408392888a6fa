package report

import (
	"context"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbin"
)

func ptr(v float64) *float64 { return &v }

// tuneRecord is a run with one search as its events record it: the
// baseline, four trials (one stopped by a guard without a figure, one
// infeasible with one), two confirmation rounds and the verdict.
func tuneRecord() *record.Record {
	trial := func(n int, name, phase string, target, wait float64, obj *float64, status string) record.TuneTrial {
		return record.TuneTrial{Search: 1, N: n, Name: name, Phase: phase, Measure: "p99", Objective: obj, Status: status, Step: n + 1,
			Settings: map[string]float64{"eviction_dirty_target": target, "checkpoint.wait": wait}}
	}
	trials := []record.TuneTrial{
		trial(0, "baseline", "baseline", 5, 60, ptr(10), "ok"),
		trial(1, "trial 1", "search", 8, 30, ptr(12), "ok"),
		trial(2, "trial 2", "search", 2, 90, nil, "failed"),
		trial(3, "trial 3", "search", 3, 20, ptr(7), "ok"),
		trial(4, "trial 4", "search", 9, 100, ptr(4), "infeasible"),
		trial(1, "confirm best", "confirm", 3, 20, ptr(7.5), "ok"),
		trial(1, "confirm baseline", "confirm", 5, 60, ptr(9.5), "ok"),
		trial(2, "confirm baseline", "confirm", 5, 60, ptr(10.5), "ok"),
		trial(2, "confirm best", "confirm", 3, 20, ptr(7), "ok"),
	}
	rec := &record.Record{Run: store.Run{ID: 3}}
	for _, tr := range trials {
		rec.Events = append(rec.Events, event(record.TuneAttrs(record.TuneKindTrial, tr)))
	}
	rec.Events = append(rec.Events, event(record.TuneAttrs(record.TuneKindVerdict, record.TuneVerdict{Search: 1, Measure: "p99", Verdict: "best setting is 28% better"})))
	return rec
}

// event is a tune event as the store reads it back (JSON types).
func event(attrs map[string]any) store.Event {
	ev := store.Event{Source: record.SourceTune, Attrs: map[string]any{}}
	for k, v := range attrs {
		switch x := v.(type) {
		case int:
			ev.Attrs[k] = float64(x)
		default:
			ev.Attrs[k] = x
		}
	}
	return ev
}

// same compares series values, NaN equal to NaN.
func same(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			return false
		}
	}
	return true
}

func TestTuneCharts(t *testing.T) {
	charts := tuneCharts([]*record.Record{tuneRecord()})
	if len(charts) != 3 {
		t.Fatalf("%d charts, want the convergence and one per knob (2)", len(charts))
	}
	conv, wait, target := charts[0], charts[1], charts[2]
	if conv.ID != "tune-3-1-convergence" || wait.ID != "tune-3-1-knob-checkpoint-wait" || target.ID != "tune-3-1-knob-eviction_dirty_target" {
		t.Fatalf("chart ids %s %s %s", conv.ID, wait.ID, target.ID)
	}
	n := math.NaN()
	rd := conv.Runs[0]
	if !same(rd.X, []float64{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("convergence x %v: want the trials 0-4, then the 2 rounds", rd.X)
	}
	want := map[string][]float64{
		tuneObjective: {10, 12, n, 7, n, n, n},
		tuneFailed:    {n, n, 12, n, 4, n, n}, // the guard's trial at the top (12), the infeasible one at its figure
		tuneBest:      {10, 10, 10, 7, 7, n, n},
		tuneConfBest:  {n, n, n, n, n, 7.5, 7},
		tuneConfBase:  {n, n, n, n, n, 9.5, 10.5},
	}
	if len(rd.Series) != len(want) {
		t.Fatalf("convergence series %+v", rd.Series)
	}
	for _, s := range rd.Series {
		if !same(s.Y, want[s.Label]) {
			t.Errorf("convergence %s: %v, want %v", s.Label, s.Y, want[s.Label])
		}
		if wantStyle := map[bool]string{true: StyleStep, false: StylePoints}[s.Label == tuneBest]; s.Style != wantStyle {
			t.Errorf("convergence %s drawn as %q", s.Label, s.Style)
		}
	}
	if conv.XLabel != "trial" || conv.XLog || conv.Unit != "ms" || !strings.Contains(conv.Note, "after trial 4, the 2 confirmation rounds") ||
		!strings.Contains(conv.Note, "Verdict: best setting is 28% better") {
		t.Errorf("convergence chart %q %v %q: %q", conv.XLabel, conv.XLog, conv.Unit, conv.Note)
	}
	// eviction_dirty_target: 5 (baseline), 8, 2 (failed), 3, 9
	// (infeasible); confirmed at 3 (best) and 5 (baseline), twice each.
	td := target.Runs[0]
	if !same(td.X, []float64{2, 3, 3, 3, 5, 5, 5, 8, 9}) {
		t.Errorf("eviction_dirty_target x %v", td.X)
	}
	wantKnob := map[string][]float64{
		tuneObjective: {n, 7, n, n, 10, n, n, 12, n},
		tuneFailed:    {12, n, n, n, n, n, n, n, 4},
		tuneConfBest:  {n, n, 7.5, 7, n, n, n, n, n},
		tuneConfBase:  {n, n, n, n, n, 9.5, 10.5, n, n},
	}
	if len(td.Series) != len(wantKnob) || target.XLabel != "eviction_dirty_target" {
		t.Fatalf("knob chart %q series %+v", target.XLabel, td.Series)
	}
	for _, s := range td.Series {
		if !same(s.Y, wantKnob[s.Label]) || s.Style != StylePoints {
			t.Errorf("eviction_dirty_target %s (%s): %v, want %v", s.Label, s.Style, s.Y, wantKnob[s.Label])
		}
	}
	if none := tuneCharts([]*record.Record{{Run: store.Run{ID: 1}}}); len(none) != 0 {
		t.Errorf("a run without a search has tune charts: %+v", none)
	}
}

// tunePlaybook is a short real search: one knob, three trials, two
// confirmation rounds.
const tunePlaybook = `
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "t.c", docs = 5000, doc_bytes = 200 }
local r = tune{ server = m, knobs = { eviction_dirty_target = {2, 10}, ["checkpoint.wait"] = {10, 120} }, objective = "p99",
  workload = { ns = "t.c", duration = 3, warmup = 1, mix = { read = 1, update = 1 }, rate = 200 },
  budget = { trials = 3 }, confirm = 2 }
print(r.verdict)
`

var (
	tuneOnce sync.Once
	tuneDB   string
)

// recordedTune returns a database with one run of tunePlaybook.
func recordedTune(t *testing.T) *store.Store {
	t.Helper()
	tuneOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-report-tune-")
		if err != nil {
			t.Fatal(err)
		}
		tuneDB = testbin.RecordRuns(t, dir, tunePlaybook, nil)
	})
	if tuneDB == "" {
		t.Fatal("no recorded search (the first test to make it failed)")
	}
	st, err := store.OpenExisting(context.Background(), tuneDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// TestTuneChartsOfARecordedSearch: a recorded tune{} run's report has the
// convergence chart with every trial and both settings' confirmation
// rounds, and a chart per knob with the values the trials ran with.
func TestTuneChartsOfARecordedSearch(t *testing.T) {
	m, err := Load(context.Background(), recordedTune(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	got := chartsByID(m)
	tn := m.Records[0].Tunings()
	if len(tn) != 1 || tn[0].Verdict == nil {
		t.Fatalf("tunings %+v: want one search with its verdict", tn)
	}
	// The confirmation runs when a trial measured better than the
	// baseline (nearly always: the baseline runs first, after the load).
	confirmed := len(tn[0].Trials) == 8
	if !confirmed && (len(tn[0].Trials) != 4 || !strings.HasPrefix(tn[0].Verdict.Verdict, "no setting beat the baseline")) {
		t.Fatalf("trials %+v, verdict %q: want the baseline, 3 trials and 2 rounds of 2, or no rounds and no improvement", tn[0].Trials, tn[0].Verdict.Verdict)
	}
	points := len(tn[0].Trials)
	conv, ok := got["tune-1-1-convergence"]
	if !ok {
		t.Fatalf("no convergence chart among %v", ids(m))
	}
	rd := conv.Runs[0]
	wantX := []float64{0, 1, 2, 3, 4, 5}
	if !confirmed {
		wantX = wantX[:4]
	}
	if !same(rd.X, wantX) {
		t.Errorf("convergence x %v, want %v", rd.X, wantX)
	}
	bySeries := map[string]Series{}
	for _, s := range rd.Series {
		bySeries[s.Label] = s
	}
	want := []string{tuneObjective, tuneBest}
	if confirmed {
		want = append(want, tuneConfBest, tuneConfBase)
	}
	for _, l := range want {
		if s, ok := bySeries[l]; !ok || countMeasured(s.Y) == 0 {
			t.Errorf("convergence chart: series %q missing or empty (%+v)", l, rd.Series)
		}
	}
	for i, tr := range tn[0].Trials[:4] {
		y := bySeries[tuneObjective].Y[i]
		if f, ok := bySeries[tuneFailed]; ok && math.IsNaN(y) {
			y = f.Y[i]
		}
		if math.IsNaN(y) || tr.Objective != nil && y != *tr.Objective {
			t.Errorf("trial %d (%s): drawn at %v, recorded %v", i, tr.Status, y, tr.Objective)
		}
	}
	if c := bySeries[tuneConfBest]; confirmed && (countMeasured(c.Y) != 2 || countMeasured(bySeries[tuneConfBase].Y) != 2) {
		t.Errorf("confirmation rounds drawn: best %v, baseline %v; want 2 each", c.Y, bySeries[tuneConfBase].Y)
	}
	for _, k := range []string{"eviction_dirty_target", "checkpoint-wait"} {
		c, ok := got["tune-1-1-knob-"+k]
		if !ok || len(c.Runs[0].X) != points {
			t.Errorf("knob chart %s: %+v; want %d points (the trials and rounds)", k, c, points)
			continue
		}
		for _, x := range c.Runs[0].X {
			if k == "eviction_dirty_target" && (x < 2 || x > 10) && x != tn[0].Trials[0].Settings["eviction_dirty_target"] {
				t.Errorf("eviction_dirty_target %v outside the search's range", x)
			}
		}
	}
}

func countMeasured(y []float64) int {
	n := 0
	for _, v := range y {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

func ids(m *Model) []string {
	var out []string
	for _, c := range m.Charts {
		out = append(out, c.ID)
	}
	return out
}
