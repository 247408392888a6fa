package workload

import (
	"strings"
	"testing"
)

// curve builds sweep points from thread counts, ops/s and p99s (ms).
func curve(threads []int, ops, p99ms []float64) []SweepPoint {
	ps := make([]SweepPoint, len(threads))
	for i, n := range threads {
		ps[i] = SweepPoint{Threads: n, OpsPerSec: ops[i], P99Micros: p99ms[i] * 1000}
	}
	return ps
}

func TestKneeRule(t *testing.T) {
	doubling := []int{1, 2, 4, 8, 16, 32, 64}
	tests := []struct {
		name   string
		points []SweepPoint
		knee   int // 0: none
		reason string
	}{
		{"saturates at 8", curve(doubling, []float64{1000, 1900, 3500, 5000, 5200, 5300, 5250}, []float64{1, 1.1, 1.3, 1.8, 3.5, 7, 14}),
			8, "from 8 threads on, throughput grows by less than 10% per doubling (+4%, +3%, +2%) while p99 grows from 1.800 ms to 14.000 ms"},
		// A full-size run on a busy two-core machine: 16 threads came out
		// low and 32 high; measured from 8 threads, neither grows 10% per
		// doubling.
		{"noisy plateau", curve(doubling, []float64{7409, 7855, 10220, 11501, 10116, 12675, 10931},
			[]float64{0.503, 1.601, 2.093, 4.167, 10.367, 15.847, 71.935}), 8, "from 8 threads on"},
		{"still scaling", curve(doubling, []float64{1000, 2000, 4000, 8000, 16000, 32000, 64000}, []float64{1, 1, 1, 1, 1, 1, 1}),
			0, "throughput still grows by 100% per doubling from 32 to 64 threads: the sweep did not reach the knee"},
		{"flat but p99 flat too", curve([]int{1, 2, 4}, []float64{1000, 1950, 2000}, []float64{1, 1, 0.9}),
			0, "throughput grows by 3% per doubling from 2 to 4 threads but p99 does not grow (1.000 ms to 0.900 ms)"},
		{"a plateau before more growth", curve([]int{1, 2, 4, 8, 16}, []float64{100, 105, 160, 165, 166}, []float64{1, 2, 3, 4, 5}),
			4, "from 4 threads on"},
		{"p99 dips but stays above the knee's", curve([]int{4, 8, 16, 32, 64}, []float64{100, 200, 205, 206, 207}, []float64{1, 2, 3, 2.5, 4}),
			8, "from 8 threads on"},
		{"p99 falls back to the knee's", curve([]int{4, 8, 16, 32}, []float64{100, 200, 205, 206}, []float64{1, 2, 3, 2}),
			0, "p99 does not grow (3.000 ms to 2.000 ms)"},
		// 3 to 9 threads is log2(3) = 1.58 doublings: 15% over it is 9% per doubling.
		{"not doublings", curve([]int{1, 3, 9}, []float64{100, 250, 287.5}, []float64{1, 2, 4}), 3, "(+9%)"},
		{"unsorted input", curve([]int{8, 1, 4, 2}, []float64{400, 100, 390, 200}, []float64{8, 1, 4, 2}), 4, "from 4 threads on"},
		{"one point", curve([]int{4}, []float64{100}, []float64{1}), 0, "a knee needs at least two thread counts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			knee, ok, reason, err := Knee(tt.points)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.knee > 0) || knee != tt.knee || !strings.Contains(reason, tt.reason) {
				t.Errorf("knee %d (%v), %q; want %d, %q", knee, ok, reason, tt.knee, tt.reason)
			}
		})
	}
	if _, _, _, err := Knee(curve([]int{2, 2}, []float64{1, 2}, []float64{1, 2})); err == nil {
		t.Error("a thread count given twice is accepted")
	}
}
