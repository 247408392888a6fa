package compare

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"

	"wtd/engine/record"
	"wtd/engine/store"
)

// HistoryRuns is how many earlier runs the verdict of a repeated run
// weighs it against (VerdictInHistory).
const HistoryRuns = 10

// MinHistoryRuns is the fewest earlier comparable runs VerdictInHistory
// judges a run among; with fewer it compares the run with the previous
// one, as VerdictOf does.
const MinHistoryRuns = 3

// robustZ is how many robust standard deviations (1.4826 x the median
// absolute deviation) from the earlier runs' median a step's value must
// lie to be slower or faster, besides lying outside all of them.
const robustZ = 3

// VerdictInHistory judges run id by its place among the earlier ok runs of
// its playbook with the same parameters that are comparable with it (the
// newest HistoryRuns of them), not by one neighbour: a step is slower
// (faster) in ops/s when its value is below (above) that of every earlier
// run, differs from their median by at least the minimum change, and lies
// more than three robust standard deviations from it. Per-second values of
// one run are not independent draws, and a busy hour makes one run slow;
// the spread of whole runs is what a new run is measured against. With
// fewer than MinHistoryRuns earlier comparable runs it is VerdictOf, and
// Method says so.
func VerdictInHistory(ctx context.Context, st *store.Store, id int64, opt Options) (RunVerdict, error) {
	opt = opt.withDefaults()
	rec, err := record.LoadSteps(ctx, st, id)
	if err != nil {
		return RunVerdict{Run: id}, err
	}
	earlier, err := comparableEarlier(ctx, st, rec)
	if err != nil {
		return RunVerdict{Run: id}, err
	}
	if len(earlier) < MinHistoryRuns {
		v, err := VerdictOf(ctx, st, id, opt)
		if v.Verdict != VerdictNoBaseline {
			v.Method = fmt.Sprintf("against the previous run: %d earlier comparable runs (the history needs %d)", len(earlier), MinHistoryRuns)
		}
		return v, err
	}
	v := RunVerdict{Run: id, Alpha: opt.Alpha, Test: TestHistory, History: make([]int64, len(earlier)),
		Method: fmt.Sprintf("against the last %d comparable runs: outside all of them, %g%% or more from their median and %d robust standard deviations", len(earlier), 100*opt.MinChange, robustZ)}
	keyed := make([]map[string]record.StepRecord, len(earlier))
	for i, e := range earlier {
		v.History[i] = e.Run.ID
		_, keyed[i] = matchKeys(e.Steps, nil)
	}
	order, steps := matchKeys(rec.Steps, nil)
	m := measures[0]
	for _, k := range order {
		s := steps[k]
		x := m.value(record.MeasuresOf(s))
		if s.Status != record.StatusOK || x == nil {
			continue
		}
		var prev []float64
		for _, e := range keyed {
			if es, ok := e[k]; ok && es.Status == record.StatusOK {
				if y := m.value(record.MeasuresOf(es)); y != nil {
					prev = append(prev, *y)
				}
			}
		}
		verdict, med := placeInHistory(*x, prev, opt.MinChange)
		if verdict != Slower && verdict != Faster {
			continue
		}
		name := m.name
		if record.MeasuresOf(s).Load {
			name = m.loadName
		}
		vs := VerdictStep{Step: k, Verdict: verdict, Measure: name, A: &med, B: x}
		pct := 100 * (*x/med - 1)
		vs.ChangePct = &pct
		v.Steps = append(v.Steps, vs)
		if verdict == Slower {
			v.Slower = append(v.Slower, k)
		} else {
			v.Faster = append(v.Faster, k)
		}
		if busy := hostBusy(RunRef{ID: id}, []record.StepRecord{s}); busy != "" && !slices.Contains(v.HostBusy, busy) {
			v.HostBusy = append(v.HostBusy, busy)
		}
	}
	v.Verdict = v.word()
	return v, nil
}

// TestHistory is the Test of a verdict in a run's history.
const TestHistory = "history"

// placeInHistory judges value x among the earlier runs' values prev: slower
// or faster (higher is faster), or no difference; and their median. Fewer
// than MinHistoryRuns values are no difference.
func placeInHistory(x float64, prev []float64, minChange float64) (string, float64) {
	if len(prev) < MinHistoryRuns {
		return NoDifference, math.NaN()
	}
	med := Median(prev)
	dev := make([]float64, len(prev))
	for i, p := range prev {
		dev[i] = math.Abs(p - med)
	}
	sigma := 1.4826 * Median(dev)
	lo, hi := slices.Min(prev), slices.Max(prev)
	far := func(d float64) bool {
		return med != 0 && math.Abs(d/med) >= minChange && (sigma == 0 || math.Abs(d)/sigma > robustZ)
	}
	switch {
	case x < lo && far(x-med):
		return Slower, med
	case x > hi && far(x-med):
		return Faster, med
	}
	return NoDifference, med
}

// comparableEarlier are the newest HistoryRuns earlier ok runs of rec's
// playbook with its parameters that are comparable with it (same playbook
// text, servers, host), newest first; runs of the same playbook file come
// before those of another file of the same name.
func comparableEarlier(ctx context.Context, st *store.Store, rec *record.Record) ([]*record.Record, error) {
	run := rec.Run
	// Incomparable runs are read too, up to a bound.
	cands, err := st.FindRuns(ctx, store.RunFilter{Playbook: path.Base(run.PlaybookPath), Status: store.StatusOK, Before: run.ID, Limit: 4 * HistoryRuns})
	if err != nil {
		return nil, err
	}
	var out []*record.Record
	for _, samePath := range []bool{true, false} {
		for _, c := range cands {
			if len(out) == HistoryRuns {
				return out, nil
			}
			if (c.PlaybookPath == run.PlaybookPath) != samePath || !store.SameParams(c.Params, run.Params) {
				continue
			}
			e, err := record.LoadSteps(ctx, st, c.ID)
			if err != nil {
				return nil, err
			}
			if len(Reasons(e, rec)) == 0 {
				out = append(out, e)
			}
		}
	}
	return out, nil
}
