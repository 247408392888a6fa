package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
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

// DefaultServer returns the server a step describes when it names none:
// the only one running, else nil.
func (r *Run) DefaultServer() *Server { return r.defaultServer() }

// SweepOptions say how SweepThreads runs.
type SweepOptions struct {
	Threads []int
	// Duration bounds each thread count's run (0: the spec's bounds).
	Duration time.Duration
	// Step names the steps (default "threads"); Labels are added to each,
	// beside threads = N.
	Step   string
	Labels map[string]any
	// Progress, if set, gives the progress callback of each run.
	Progress func(threads int) func(done, total int64)
}

// SweepThreads runs spec on s once per thread count, each as its own
// recorded step labelled threads = N, and returns the table and its knee.
// Inserts go on from one run's last _id to the next. A failing step ends the
// sweep with its error and the points so far.
func (r *Run) SweepThreads(ctx context.Context, s *Server, spec WorkloadSpec, opt SweepOptions) (SweepResult, error) {
	if len(opt.Threads) == 0 {
		return SweepResult{}, errors.New("sweep threads: no thread counts")
	}
	for _, n := range opt.Threads {
		if err := checkRange("threads", int64(n), 1, MaxThreads); err != nil {
			return SweepResult{}, fmt.Errorf("sweep threads: %w", err)
		}
	}
	if opt.Duration > 0 {
		spec.Duration = opt.Duration
	}
	name := opt.Step
	if name == "" {
		name = "threads"
	}
	var res SweepResult
	for _, n := range opt.Threads {
		labels := map[string]any{}
		for k, v := range opt.Labels {
			labels[k] = v
		}
		labels["threads"] = n
		spec.Threads = n
		var progress func(done, total int64)
		if opt.Progress != nil {
			progress = opt.Progress(n)
		}
		rec, err := r.Step(ctx, StepSpec{Name: name, Labels: labels, Server: s, NS: spec.NS}, func(ctx context.Context) (any, error) {
			return s.Workload(ctx, spec, progress)
		})
		wr, _ := rec.Result.(WorkloadResult)
		if err != nil {
			return res, fmt.Errorf("sweep threads: %d threads: %w", n, err)
		}
		res.Points = append(res.Points, SweepPoint{Threads: n, OpsPerSec: wr.Total.OpsPerSec, P50Micros: wr.Total.P50Micros, P99Micros: wr.Total.P99Micros})
		if wr.NextInsertID > 0 {
			spec.InsertStartID = wr.NextInsertID
		}
	}
	knee, ok, reason, err := Knee(res.Points)
	if err != nil {
		return res, fmt.Errorf("sweep threads: %w", err)
	}
	if ok {
		res.Knee = &knee
	}
	res.Reason = reason
	r.Eventf("info", "sweep", "threads %v: %s", opt.Threads, reason)
	return res, nil
}
