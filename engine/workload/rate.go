package workload

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// MaxRate bounds Spec.Rate and the rates of a schedule (ops/s).
const MaxRate = 10_000_000

// lateAfter is how far past its scheduled start an operation must begin to
// count as late: twice the granularity of Go's timers (1 ms when the
// process is otherwise idle).
const lateAfter = 2 * time.Millisecond

// behindTolerance is how far below the target rate a run may end and still
// count as keeping it.
const behindTolerance = 0.02

// RateResult says how an open loop kept its schedule, over the measured
// time (after the warm-up).
type RateResult struct {
	// TargetOpsPerSec is the schedule's mean rate; AchievedOpsPerSec the
	// operations (successful or not) that finished per second.
	TargetOpsPerSec   float64 `json:"target_ops_per_sec"`
	AchievedOpsPerSec float64 `json:"achieved_ops_per_sec"`
	// Late counts the operations that began more than LateAfterMicros
	// after their scheduled start; LateP99Micros and LateMaxMicros are the
	// 99th percentile and the maximum of how late every operation began.
	Late            int64   `json:"late"`
	LateAfterMicros float64 `json:"late_after_micros"`
	LateP99Micros   float64 `json:"late_p99_micros"`
	LateMaxMicros   float64 `json:"late_max_micros"`
	// Missed counts the operations scheduled before the end that never
	// started.
	Missed int64 `json:"missed"`
}

// rateSchedule is an open loop's schedule: operation i is due at at(i)
// after the start. Step j of the schedule runs at rates[j] for step (the
// last rate holds); first[j] is the index of its first operation. Threads
// take the next operation from a shared counter, so a thread that is free
// takes the next one due, whichever thread a slow operation holds.
type rateSchedule struct {
	rates []float64
	step  time.Duration
	first []int64
	next  atomic.Int64
}

func newRateSchedule(rates []float64, step time.Duration) *rateSchedule {
	s := &rateSchedule{rates: rates, step: step, first: make([]int64, len(rates))}
	for j := 1; j < len(rates); j++ {
		s.first[j] = s.first[j-1] + int64(math.Round(rates[j-1]*step.Seconds()))
	}
	return s
}

// stepOf returns the step operation i falls in.
func (s *rateSchedule) stepOf(i int64) int {
	j := len(s.first) - 1
	for j > 0 && i < s.first[j] {
		j--
	}
	return j
}

// at returns when operation i is due, from the start.
func (s *rateSchedule) at(i int64) time.Duration {
	j := s.stepOf(i)
	return time.Duration(j)*s.step + time.Duration(math.Round(float64(i-s.first[j])/s.rates[j]*1e9))
}

// count returns how many operations are due before off.
func (s *rateSchedule) count(off time.Duration) int64 {
	if off <= 0 {
		return 0
	}
	j := len(s.rates) - 1
	if s.step > 0 {
		j = min(j, int(off/s.step))
	}
	n := s.first[j] + int64(float64(off-time.Duration(j)*s.step)/1e9*s.rates[j])
	// The estimate is off by rounding at most; at is monotonic.
	for n > 0 && s.at(n-1) >= off {
		n--
	}
	for s.at(n) < off {
		n++
	}
	return n
}

// drainGrace is how long after the end of a run bounded by a duration an
// operation due before the end may still start: a short stall of the
// client near the end does not drop operations, and a run that is behind
// does not run on for its whole backlog.
func (w *workloadRun) drainGrace() time.Duration {
	return min(max(w.spec.Duration/5, 100*time.Millisecond), time.Second)
}

// checkRate checks the open-loop fields, gives a schedule without other
// bound its length as Duration, and sets w.sched.
func (w *workloadRun) checkRate(s *Spec) error {
	rates := s.RateSchedule
	switch {
	case s.Rate != 0 && len(rates) > 0:
		return errors.New("rate and rate_schedule both given: give one")
	case s.Rate != 0:
		rates = []float64{s.Rate}
		if s.RateStep != 0 {
			return errors.New("rate_step needs a rate schedule (a list of rates)")
		}
	case len(rates) == 0:
		if s.RateStep != 0 {
			return errors.New("rate_step needs a rate schedule (a list of rates)")
		}
		return nil
	}
	for i, r := range rates {
		if !(r > 0 && r <= MaxRate) {
			name := "rate"
			if len(s.RateSchedule) > 0 {
				name = fmt.Sprintf("rate_schedule[%d]", i+1)
			}
			return fmt.Errorf("%s %v out of range (0, %d] operations per second", name, r, MaxRate)
		}
	}
	if len(rates) > 1 && s.RateStep <= 0 {
		return fmt.Errorf("rate_step %v: a schedule of %d rates needs a step > 0", s.RateStep, len(rates))
	}
	if s.RateStep < 0 {
		return fmt.Errorf("rate_step %v out of range (0, +inf)", s.RateStep)
	}
	if s.Ops == 0 && s.Duration == 0 && len(s.RateSchedule) > 0 {
		s.Duration = time.Duration(len(rates)) * s.RateStep
	}
	w.sched = newRateSchedule(rates, s.RateStep)
	return nil
}

// openLoop gives t the histograms an open loop adds: service times and
// how late operations began.
func (t *workloadThread) openLoop() {
	t.service = histogramsFor(t.used, newLatencyHistogram)
	t.lateness = newLatencyHistogram()
}

// waitUntil waits until at, or until stop is closed (then it returns
// false). An operation already due does not wait; late says by how much
// it is due already (0 when it waited).
func (t *workloadThread) waitUntil(at time.Time, stop <-chan struct{}) (ok bool, late time.Duration) {
	d := time.Until(at)
	if d <= 0 {
		select {
		case <-stop:
			return false, -d
		default:
			return true, -d
		}
	}
	if t.timer == nil {
		t.timer = time.NewTimer(d)
	} else {
		t.timer.Reset(d)
	}
	select {
	case <-t.timer.C:
		return true, 0
	case <-stop:
		return false, 0
	}
}

// recordScheduled counts one finished operation of an open loop: its
// latency from the scheduled start (corrected), its service time from the
// send, and how late it began.
func (t *workloadThread) recordScheduled(op opKind, corrected, service, lateness time.Duration, err error) {
	t.record(op, corrected, err)
	if !t.measuring {
		return
	}
	if err == nil {
		recordLatency(t.service[op], service)
	}
	us := min(max(lateness.Microseconds(), 0), histHighestMicros)
	_ = t.lateness.RecordValue(us)
	if lateness > lateAfter {
		t.late++
	}
}

// rateResult says how the run kept its schedule between the end of the
// warm-up (from, after the start) and the end of the run (end), given
// the measured operations that finished: the rates are over the scheduled
// window (a duration), or the time the operations took (a number of them).
func (w *workloadRun) rateResult(threads []*workloadThread, from, end time.Duration, finished int64) (*RateResult, bool) {
	lateness := newLatencyHistogram()
	r := &RateResult{LateAfterMicros: float64(lateAfter.Microseconds())}
	for _, t := range threads {
		if t.lateness != nil {
			lateness.Merge(t.lateness)
		}
		r.Late += t.late
	}
	if lateness.TotalCount() > 0 {
		r.LateP99Micros = float64(lateness.ValueAtQuantile(99))
		r.LateMaxMicros = float64(lateness.Max())
	}
	// The window is the scheduled one, or the time it took when that was
	// shorter (a run stopped early) or unbounded (a number of operations).
	window := end - from
	if w.spec.Duration > 0 {
		window = min(window, w.spec.Duration)
	}
	due := w.sched.count(from+window) - w.sched.count(from)
	if w.totalOps > 0 {
		due = min(due, w.totalOps-w.sched.count(from))
	}
	r.Missed = max(0, due-finished)
	if el := window.Seconds(); el > 0 {
		r.TargetOpsPerSec = float64(due) / el
		r.AchievedOpsPerSec = float64(finished) / el
	}
	return r, r.AchievedOpsPerSec < (1-behindTolerance)*r.TargetOpsPerSec
}

// serviceStats summarises service times as LatencyStats.
func serviceStats(h *hdrhistogram.Histogram) *LatencyStats {
	s := latencyStats(h, 0, 0)
	return &LatencyStats{MeanMicros: s.MeanMicros, P50Micros: s.P50Micros, P95Micros: s.P95Micros, P99Micros: s.P99Micros, MaxMicros: s.MaxMicros}
}
