package report

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbin"
)

// kneeStep is a recorded workload step of a sweep (ten seconds of it, as
// a store gives it back).
func kneeStep(name string, threads, ops, p99 float64) record.StepRecord {
	return record.StepRecord{Name: name, Status: record.StatusOK, Labels: map[string]any{"threads": threads},
		Result: map[string]any{"total": map[string]any{"count": 10 * ops, "ops_per_sec": ops, "p50_micros": p99 / 4, "p99_micros": p99}}}
}

func TestKneeCharts(t *testing.T) {
	rec := &record.Record{Run: store.Run{ID: 7}, Steps: []record.StepRecord{
		{Name: "load", Status: record.StatusOK, Labels: map[string]any{"threads": 8.0}, Result: map[string]any{"docs": 1000.0, "batch": map[string]any{}}},
		kneeStep("threads", 1, 1000, 1000), kneeStep("threads", 2, 1900, 1100), kneeStep("threads", 4, 3500, 1300),
		kneeStep("threads", 8, 5000, 1800), kneeStep("threads", 16, 5200, 3500),
		kneeStep("threads", 16, 5000, 3400), kneeStep("threads", 16, 5100, 3600), // repeated: the median counts
		kneeStep("threads", 32, 5300, 7000),
		kneeStep("other", 1, 10, 1000), // one count: no sweep
		{Name: "threads", Status: record.StatusOK, Labels: map[string]any{"threads": 64.0}, // every operation failed: no latency, no point
			Result: map[string]any{"total": map[string]any{"count": 0.0, "errors": 900.0, "ops_per_sec": 0.0, "p50_micros": 0.0, "p99_micros": 0.0}}},
	}}
	charts := kneeCharts([]*record.Record{rec})
	if len(charts) != 2 || charts[0].ID != "knee-ops" || charts[1].ID != "knee-p99" {
		t.Fatalf("charts %+v", charts)
	}
	ops, p99 := charts[0], charts[1]
	if len(ops.Runs) != 1 || ops.XLabel != kneeXLabel || ops.Runs[0].Series[0].Label != "threads" {
		t.Fatalf("throughput chart %+v", ops)
	}
	wantX, wantY, wantQ := []float64{1, 2, 4, 8, 16, 32}, []float64{1000, 1900, 3500, 5000, 5100, 5300}, []float64{1, 1.1, 1.3, 1.8, 3.5, 7}
	if len(ops.Runs[0].X) != len(wantX) || len(p99.Runs[0].Series[0].Y) != len(wantX) {
		t.Fatalf("x %v p99 %v, want %d points (the step without a success left out)", ops.Runs[0].X, p99.Runs[0].Series[0].Y, len(wantX))
	}
	for i := range wantX {
		if ops.Runs[0].X[i] != wantX[i] || ops.Runs[0].Series[0].Y[i] != wantY[i] || p99.Runs[0].Series[0].Y[i] != wantQ[i] {
			t.Errorf("point %d: x %v ops %v p99 %v ms, want %v %v %v", i, ops.Runs[0].X[i], ops.Runs[0].Series[0].Y[i], p99.Runs[0].Series[0].Y[i], wantX[i], wantY[i], wantQ[i])
		}
	}
	if !strings.Contains(ops.Note, "run 7, threads: knee at 8 threads: from 8 threads on") || strings.Contains(ops.Note, "other") {
		t.Errorf("note %q", ops.Note)
	}
	if empty := kneeCharts([]*record.Record{{Run: store.Run{ID: 1}}}); empty[0].SeriesCount() != 0 {
		t.Errorf("a run without a sweep has a knee chart: %+v", empty)
	}
}

// kneePlaybook is a small sweep: three thread counts, long enough for
// each step to draw a line on the charts in time too (two whole seconds).
const kneePlaybook = `
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "k.c", docs = 2000, doc_bytes = 500 } end }
local sw = sweep.threads{ workload = { ns = "k.c" }, threads = { 1, 2, 4 }, duration = 2.5 }
print(sw.reason)
`

var (
	kneeOnce sync.Once
	kneeDir  string
	kneeDB   string
)

// recordedKnee returns a database with one run of kneePlaybook.
func recordedKnee(t *testing.T) *store.Store {
	t.Helper()
	kneeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-report-knee-")
		if err != nil {
			t.Fatal(err)
		}
		kneeDir = dir
		kneeDB = testbin.RecordRuns(t, dir, kneePlaybook, nil)
	})
	if kneeDB == "" {
		t.Fatal("no recorded sweep (the first test to make it failed)")
	}
	st, err := store.OpenExisting(context.Background(), kneeDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// TestKneeChartsOfARecordedSweep: a recorded sweep.threads run gets the two
// charts against threads, with the figures its steps recorded, and its page
// carries them with their x label.
func TestKneeChartsOfARecordedSweep(t *testing.T) {
	st := recordedKnee(t)
	m, err := Load(context.Background(), st, 1)
	if err != nil {
		t.Fatal(err)
	}
	var knee []Chart
	for _, c := range m.Charts {
		if c.XLabel != "" {
			knee = append(knee, c)
		}
	}
	if len(knee) != 2 || len(knee[0].Runs) != 1 || len(knee[0].Bounds) != 0 {
		t.Fatalf("charts against threads: %+v", knee)
	}
	rd := knee[0].Runs[0]
	var steps []record.StepRecord
	for _, s := range m.Records[0].Steps {
		if s.Name == "threads" {
			steps = append(steps, s)
		}
	}
	if len(rd.X) != 3 || len(steps) != 3 {
		t.Fatalf("x %v, %d sweep steps", rd.X, len(steps))
	}
	for i, s := range steps {
		ops := record.MeasuresOf(s).OpsPerSec
		if ops == nil || rd.X[i] != s.Labels["threads"] || rd.Series[0].Y[i] != *ops || *ops <= 0 {
			t.Errorf("point %d: %v threads %v ops/s; step %v %v", i, rd.X[i], rd.Series[0].Y[i], s.Labels, ops)
		}
	}
	var html strings.Builder
	if err := m.WriteHTML(&html, compare.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="chart-knee-ops"`, `id="chart-knee-p99"`, `"xlabel":"threads (log scale)"`, "The knee is the smallest thread count"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
