package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// KneeGrowth is the throughput growth per doubling of threads below which
// the knee rule says throughput has stopped growing.
const KneeGrowth = 0.10

// SweepPoint is one thread count of a sweep: its throughput and latency.
type SweepPoint struct {
	Threads   int     `json:"threads"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Micros float64 `json:"p50_micros"`
	P99Micros float64 `json:"p99_micros"`
}

// SweepResult is a sweep's table and its knee: nil, with the reason, when
// the thread counts swept did not reach it.
type SweepResult struct {
	Points []SweepPoint `json:"points"`
	Knee   *int         `json:"knee"`
	Reason string       `json:"reason"`
}

// Knee applies the knee rule to points: the knee is the smallest thread
// count k such that every larger count measured has less than KneeGrowth
// more throughput per doubling of the threads from k, and a higher p99
// latency than k: past it, more threads bring no more work, only longer
// waits. Growth per doubling from t1 to t2 threads is
// (ops2/ops1)^(1/log2(t2/t1)) - 1; measuring it from the knee rather than
// point to point keeps one noisy point from moving the knee. The points are
// taken in order of threads; a thread count given twice is an error. ok is
// false when no thread count qualifies; reason says why, or what the knee
// is.
func Knee(points []SweepPoint) (knee int, ok bool, reason string, err error) {
	ps := slices.Clone(points)
	slices.SortFunc(ps, func(a, b SweepPoint) int { return a.Threads - b.Threads })
	for i, p := range ps {
		if p.Threads < 1 || (i > 0 && p.Threads == ps[i-1].Threads) {
			return 0, false, "", fmt.Errorf("knee: thread counts must be distinct and >= 1, got %d", p.Threads)
		}
	}
	if len(ps) < 2 {
		return 0, false, "a knee needs at least two thread counts", nil
	}
	last := len(ps) - 1
	holds := func(k int) bool {
		for j := k + 1; j <= last; j++ {
			if perDoubling(ps[k], ps[j]) >= KneeGrowth || ps[j].P99Micros <= ps[k].P99Micros {
				return false
			}
		}
		return true
	}
	for k := range last {
		if !holds(k) {
			continue
		}
		var gs []string
		for j := k + 1; j <= last; j++ {
			gs = append(gs, fmt.Sprintf("%+.0f%%", 100*perDoubling(ps[k], ps[j])))
		}
		return ps[k].Threads, true, fmt.Sprintf("from %d threads on, throughput grows by less than %.0f%% per doubling (%s) while p99 grows from %s to %s",
			ps[k].Threads, 100*KneeGrowth, strings.Join(gs, ", "), ms(ps[k].P99Micros), ms(ps[last].P99Micros)), nil
	}
	a, b := ps[last-1], ps[last]
	if g := perDoubling(a, b); g >= KneeGrowth {
		return 0, false, fmt.Sprintf("throughput still grows by %.0f%% per doubling from %d to %d threads: the sweep did not reach the knee; try more threads",
			100*g, a.Threads, b.Threads), nil
	}
	return 0, false, fmt.Sprintf("throughput grows by %.0f%% per doubling from %d to %d threads but p99 does not grow (%s to %s): no knee by the rule",
		100*perDoubling(a, b), a.Threads, b.Threads, ms(a.P99Micros), ms(b.P99Micros)), nil
}

// perDoubling is the throughput growth per doubling of the threads from a
// to b.
func perDoubling(a, b SweepPoint) float64 {
	if a.OpsPerSec <= 0 {
		if b.OpsPerSec > 0 {
			return math.Inf(1)
		}
		return 0
	}
	return math.Pow(b.OpsPerSec/a.OpsPerSec, 1/math.Log2(float64(b.Threads)/float64(a.Threads))) - 1
}

func ms(micros float64) string { return fmt.Sprintf("%.3f ms", micros/1000) }
