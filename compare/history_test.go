package compare

import (
	"math/rand/v2"
	"testing"
	"wtd/engine/record"
)

// TestHistoryMarksRegressions: 40 nightly runs of two steps; reads slow
// down by 15% from run 25 on, loads do not change.
func TestHistoryMarksRegressions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var runs []RunRef
	var steps [][]record.StepRecord
	for i := range 40 {
		reads := 8000 * (1 + 0.03*rng.NormFloat64())
		if i >= 25 {
			reads *= 0.85
		}
		load := 90000 * (1 + 0.03*rng.NormFloat64())
		runs = append(runs, RunRef{ID: int64(100 + i)})
		steps = append(steps, []record.StepRecord{
			{Seq: 1, Name: "load", Status: record.StatusOK, Result: map[string]any{"docs": 1000.0, "docs_per_sec": load,
				"batch": map[string]any{"p50_micros": 100.0, "p99_micros": 200.0}}},
			{Seq: 2, Name: "reads", Labels: map[string]any{"round": 1.0}, Status: record.StatusOK,
				Result: map[string]any{"total": map[string]any{"count": 1000.0, "ops_per_sec": reads, "p99_micros": 300.0}}},
		})
	}
	m, err := measureNamed("ops/s")
	if err != nil {
		t.Fatal(err)
	}
	h := BuildHistory(runs, steps, m, HistoryOptions{})
	if len(h.Series) != 2 || h.Series[0].Step != "load" || h.Series[1].Step != "reads (round=1)" {
		t.Fatalf("series %+v", h.Series)
	}
	if c := h.Series[0].Changes; len(c) != 0 {
		t.Errorf("load changes %+v", c)
	}
	c := h.Series[1].Changes
	if len(c) != 1 || c[0].Run != 125 || c[0].Kind != "regression" || c[0].ChangePct > -10 || c[0].ChangePct < -20 {
		t.Errorf("reads changes %+v", c)
	}
	// p99 going up is a regression too; a steady p99 has no change.
	p99, _ := measureNamed("p99")
	if h := BuildHistory(runs, steps, p99, HistoryOptions{}); len(h.Series[1].Changes) != 0 {
		t.Errorf("steady p99 changes %+v", h.Series[1].Changes)
	}
	if _, err := measureNamed("speed"); err == nil {
		t.Error("unknown measure accepted")
	}
}
