package report

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
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

// TestQuietSecondIsAGapInTheCharts: a workload second in which nothing
// succeeded has no p99 (wtd leaves it out; older runs hold 0 beside a
// count of 0): the page's data has null for it in the p99 chart and the
// heatmap, not 0, while its operations are a measured 0.
func TestQuietSecondIsAGapInTheCharts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	hist := func(us ...int64) string {
		h := hdrhistogram.New(1, 60_000_000, 2)
		for _, v := range us {
			h.RecordValue(v)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	busy := func(s int) workload.SecondPoint {
		return workload.SecondPoint{Second: s, Counts: map[string]int64{"read": 3, "insert": 0}, P99Micros: map[string]float64{"read": 2000},
			Hist: map[string]string{"read": hist(500, 1000, 2000)}}
	}
	quiet := map[string]workload.SecondPoint{
		"as recorded now": {Second: 1, Counts: map[string]int64{"read": 0, "insert": 0}, P99Micros: map[string]float64{}, Errors: map[string]int64{"read": 2}},
		"as recorded before": {Second: 1, Counts: map[string]int64{"read": 0, "insert": 0}, P99Micros: map[string]float64{"read": 0, "insert": 0},
			Errors: map[string]int64{"read": 2}},
	}
	for name, q := range quiet {
		series := []workload.SecondPoint{busy(0), q, busy(2), busy(3)} // the last, partial second is left out
		b, err := json.Marshal(workload.Result{Series: series})
		if err != nil {
			t.Fatal(err)
		}
		var stored map[string]any
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		rec := &record.Record{Run: store.Run{ID: 1, RunInfo: store.RunInfo{StartedAt: t0}, EndedAt: t0.Add(5 * time.Second)},
			Steps: []record.StepRecord{{Seq: 1, Name: "reads", Start: t0, End: t0.Add(4 * time.Second), Status: record.StatusOK, Result: stored}}}
		ops, p99 := stepSeries(rec)
		heat, err := heatChart(rec)
		if err != nil || heat == nil {
			t.Fatalf("%s: heatmap %v, %v", name, heat, err)
		}
		m := &Model{Records: []*record.Record{rec}, Charts: []Chart{{ID: "ops", Runs: []RunData{ops}}, {ID: "p99", Runs: []RunData{p99}}, *heat}}
		js, err := chartJSON(5, []int64{1}, m.Charts)
		if err != nil {
			t.Fatal(err)
		}
		var data struct {
			Charts []struct {
				ID   string `json:"id"`
				Runs []struct {
					Y [][]*float64 `json:"y"`
				} `json:"runs"`
			} `json:"charts"`
		}
		if err := json.Unmarshal(js, &data); err != nil {
			t.Fatalf("%s: %v in %s", name, err, js)
		}
		show := func(ys []*float64) string {
			var parts []string
			for _, y := range ys {
				if y == nil {
					parts = append(parts, "null")
				} else {
					parts = append(parts, strconv.FormatFloat(*y, 'g', -1, 64))
				}
			}
			return strings.Join(parts, " ")
		}
		// Seconds 0, 1 and 2, then the gap after the step.
		want := map[string]string{"ops": "3 0 3 null", "p99": "2 null 2 null"}
		for _, c := range data.Charts {
			for k, ys := range c.Runs[0].Y {
				got := show(ys)
				if w, ok := want[c.ID]; ok && got != w {
					t.Errorf("%s: chart %s: %s, want %s", name, c.ID, got, w)
				}
				if c.ID == heat.ID && (len(ys) != 4 || ys[1] != nil) {
					t.Errorf("%s: heatmap bucket %d: %s, want null in second 1", name, k, got)
				}
			}
		}
	}
}
