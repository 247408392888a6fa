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
	stored := func(r workload.Result) any {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
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
