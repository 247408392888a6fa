package workload

import (
	"errors"
	"fmt"
	"time"
)

// WarmupResult is the warm-up a workload had: what bounded it ("5s" or
// "1000 ops"), how long it lasted and how many operations finished in it.
type WarmupResult struct {
	By      string        `json:"by"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Ops     int64         `json:"ops"`
}

// String words the warm-up for a step's provenance.
func (r *WarmupResult) String() string {
	return fmt.Sprintf("%s (%s, %d operations) run first and left out of the summary", r.By, r.Elapsed.Round(time.Millisecond), r.Ops)
}

func checkWarmup(s Spec) error {
	switch {
	case s.Warmup < 0:
		return fmt.Errorf("warmup %v out of range [0, +inf)", s.Warmup)
	case s.WarmupOps < 0:
		return fmt.Errorf("warmup_ops %d out of range [0, 2^63-1]", s.WarmupOps)
	case s.Warmup > 0 && s.WarmupOps > 0:
		return errors.New("warmup and warmup_ops both given: give one")
	}
	return nil
}

func (w *workloadRun) hasWarmup() bool { return w.spec.Warmup > 0 || w.spec.WarmupOps > 0 }

// scheduledWarmup returns how many of an open loop's operations its
// warm-up has.
func (w *workloadRun) scheduledWarmup(s Spec) int64 {
	if s.WarmupOps > 0 {
		return s.WarmupOps
	}
	return w.sched.count(s.Warmup)
}

// initialWarmEnd is when the warm-up ends, from the start, as known
// before the run: -1 for a closed loop's warm-up of some operations.
func (w *workloadRun) initialWarmEnd() int64 {
	switch {
	case w.spec.WarmupOps > 0 && w.sched != nil:
		return int64(w.sched.at(w.spec.WarmupOps))
	case w.spec.WarmupOps > 0:
		return -1
	}
	return int64(w.spec.Warmup)
}

// startsMeasured reports whether a closed loop's operation starting at now
// (from the start) is past the warm-up. A warm-up of n operations is the
// first n to start; the one after it marks its end.
func (w *workloadRun) startsMeasured(now time.Duration) bool {
	if w.spec.WarmupOps > 0 {
		n := w.warmedOps.Add(1)
		if n == w.spec.WarmupOps+1 {
			w.warmEnd.Store(int64(now))
		}
		return n > w.spec.WarmupOps
	}
	return now >= w.spec.Warmup
}

// scheduledMeasured reports whether an open loop's operation i, due at at,
// is past the warm-up.
func (w *workloadRun) scheduledMeasured(i int64, at time.Duration) bool {
	return i >= w.spec.WarmupOps && at >= w.spec.Warmup
}

// pastEnd reports whether off (from the start) is at or past the end of a
// run bounded by a duration: the warm-up's end plus the duration (never
// before the warm-up has ended).
func (w *workloadRun) pastEnd(off time.Duration) bool {
	if w.spec.Duration == 0 {
		return false
	}
	from := w.warmEnd.Load()
	return from >= 0 && off >= time.Duration(from)+w.spec.Duration
}

// warmupResult describes the warm-up the run had, nil for none.
func (w *workloadRun) warmupResult(threads []*workloadThread, warmEnd, elapsed time.Duration) *WarmupResult {
	if !w.hasWarmup() {
		return nil
	}
	r := &WarmupResult{By: w.spec.Warmup.String(), Elapsed: min(warmEnd, elapsed)}
	if w.spec.WarmupOps > 0 {
		r.By = fmt.Sprintf("%d ops", w.spec.WarmupOps)
	}
	for _, t := range threads {
		r.Ops += t.warmOps
	}
	return r
}
