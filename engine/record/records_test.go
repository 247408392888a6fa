package record

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"wtd/engine/workload"
)

// TestSecondSeriesWithoutP99: a second in which an operation type had no
// success gives no p99 for it, whether the second leaves it out (as wtd
// records it) or holds 0 beside a count of 0 (as older runs did), and
// whether the result is a workload.Result or the JSON a store gives back;
// a second without any success has no p99 at all (NaN), never 0.
func TestSecondSeriesWithoutP99(t *testing.T) {
	current := workload.Result{Series: []workload.SecondPoint{
		{Second: 0, Counts: map[string]int64{"read": 10, "insert": 0}, P99Micros: map[string]float64{"read": 300}},
		{Second: 1, Counts: map[string]int64{"read": 0, "insert": 0}, P99Micros: map[string]float64{}},
		{Second: 2, Counts: map[string]int64{"read": 0, "insert": 4}, P99Micros: map[string]float64{"insert": 900}},
	}}
	older := workload.Result{Series: []workload.SecondPoint{
		{Second: 0, Counts: map[string]int64{"read": 10, "insert": 0}, P99Micros: map[string]float64{"read": 300, "insert": 0}},
		{Second: 1, Counts: map[string]int64{"read": 0, "insert": 0}, P99Micros: map[string]float64{"read": 0, "insert": 0}},
		{Second: 2, Counts: map[string]int64{"read": 0, "insert": 4}, P99Micros: map[string]float64{"read": 0, "insert": 900}},
	}}
	stored := func(r workload.Result) any { return storedResult(t, r) }
	for name, result := range map[string]any{"current": current, "older": older, "current, stored": stored(current), "older, stored": stored(older)} {
		ops, p99 := SecondSeries(StepRecord{Result: result})
		if got, want := fmt.Sprint(ops), "[10 0 4]"; got != want {
			t.Errorf("%s: operations %s, want %s", name, got, want)
		}
		if len(p99) != 3 || p99[0] != 300 || !math.IsNaN(p99[1]) || p99[2] != 900 {
			t.Errorf("%s: p99s %v, want [300 NaN 900]: a second without a success has none", name, p99)
		}
	}
}

// TestMeasuresWithoutSuccess: a workload or load step that counted no
// success measured its rate (0 ops/s) and its errors, but no latency: its
// p50 and p99 are nil (shown –), never 0, as a result and as stored.
func TestMeasuresWithoutSuccess(t *testing.T) {
	none := workload.Result{Total: workload.OpStats{Count: 0, Errors: 7}}
	some := workload.Result{Total: workload.OpStats{Count: 5, OpsPerSec: 5, P50Micros: 400, P99Micros: 900}}
	load := workload.LoadResult{Docs: 0}
	stored := func(r any) any { return storedResult(t, r) }
	for name, result := range map[string]any{"workload": none, "workload, stored": stored(none), "load": load, "load, stored": stored(load)} {
		m := MeasuresOf(StepRecord{Result: result})
		if m.OpsPerSec == nil || *m.OpsPerSec != 0 {
			t.Errorf("%s: ops/s %v, want 0 (measured)", name, m.OpsPerSec)
		}
		if m.P50Micros != nil || m.P99Micros != nil {
			t.Errorf("%s without a success: p50 %v, p99 %v; want nil (not measured)", name, m.P50Micros, m.P99Micros)
		}
	}
	if m := MeasuresOf(StepRecord{Result: stored(none)}); m.Errors == nil || *m.Errors != 7 {
		t.Errorf("errors %v, want 7", m.Errors)
	}
	if m := MeasuresOf(StepRecord{Result: stored(some)}); m.P99Micros == nil || *m.P99Micros != 900 || *m.P50Micros != 400 {
		t.Errorf("with successes: p50 %v p99 %v, want 400 and 900", m.P50Micros, m.P99Micros)
	}
}

// storedResult is result as a store gives it back: its JSON decoded.
func storedResult(t *testing.T, result any) any {
	t.Helper()
	b, err := json.Marshal(result)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
