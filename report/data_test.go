package report

import (
	"math"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
)

// TestStepSeriesKeepsTimeOrder: steps that follow each other closely keep
// their per-second points in time order, with a gap between steps.
func TestStepSeriesKeepsTimeOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	step := func(seq int, start time.Duration, counts ...int64) record.StepRecord {
		var pts []any
		for i, n := range counts {
			pts = append(pts, map[string]any{"second": float64(i), "counts": map[string]any{"read": float64(n)}, "p99_micros": map[string]any{"read": 500.0}})
		}
		return record.StepRecord{Seq: seq, Name: "reads", Start: t0.Add(start), End: t0.Add(start + time.Duration(len(counts))*time.Second),
			Status: record.StatusOK, Result: map[string]any{"series": pts}}
	}
	rec := &record.Record{Run: store.Run{ID: 1, RunInfo: store.RunInfo{StartedAt: t0}},
		Steps: []record.StepRecord{step(1, 0, 10, 20, 5), step(2, 2050*time.Millisecond, 30, 40, 1)}}
	ops, p99 := stepSeries(rec)
	if len(ops.X) != 6 {
		t.Fatalf("x %v", ops.X)
	}
	for i := 1; i < len(ops.X); i++ {
		if ops.X[i] <= ops.X[i-1] {
			t.Errorf("x not increasing: %v", ops.X)
		}
	}
	want := []float64{10, 20, -1, 30, 40, -1}
	for i, w := range want {
		got := ops.Series[0].Y[i]
		if w < 0 && !isNaN(got) || w >= 0 && got != w {
			t.Errorf("ops %v, want %v (-1: gap)", ops.Series[0].Y, want)
			break
		}
	}
	if p99.Series[0].Y[0] != 0.5 {
		t.Errorf("p99 %v ms", p99.Series[0].Y)
	}
}

// A stretch without samples (a server restarting between two steps) is a
// gap in the charts, not a line drawn across it; samples a little late
// are not.
func TestChartsBreakWhereSamplesAreMissing(t *testing.T) {
	rd := RunData{X: []float64{0, 1, 2, 3.4, 4.4, 12, 13, 14}, Series: []Series{{Label: "a", Y: []float64{1, 2, 3, 4, 5, 6, 7, 8}}}}
	got := breakGaps(rd)
	wantX := []float64{0, 1, 2, 3.4, 4.4, 5.4, 12, 13, 14}
	if len(got.X) != len(wantX) || len(got.Series[0].Y) != len(wantX) {
		t.Fatalf("x %v y %v, want x %v", got.X, got.Series[0].Y, wantX)
	}
	for i := range wantX {
		if math.Abs(got.X[i]-wantX[i]) > 1e-9 {
			t.Errorf("x[%d] = %v, want %v", i, got.X[i], wantX[i])
		}
		if isGap := math.IsNaN(got.Series[0].Y[i]); isGap != (i == 5) {
			t.Errorf("y[%d] = %v: gap %v, want %v", i, got.Series[0].Y[i], isGap, i == 5)
		}
	}
	if even := breakGaps(RunData{X: []float64{0, 1, 2, 3}, Series: []Series{{Y: []float64{1, 1, 1, 1}}}}); len(even.X) != 4 {
		t.Errorf("evenly sampled: %v", even.X)
	}
}
