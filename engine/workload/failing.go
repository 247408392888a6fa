package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// failWindow is how long every operation must have failed (with none
// succeeding) before a load or workload gives up.
const failWindow = time.Second

// watchInterval is how often Load and Run look at their threads'
// counters: to report progress and to notice that everything fails.
const watchInterval = 250 * time.Millisecond

// failWatch notices when operations keep failing and none succeeds. It is
// fed cumulative counts by one goroutine.
type failWatch struct {
	okAt     time.Time // when ok last changed
	ok       int64
	errsAtOK int64
}

func newFailWatch(start time.Time) *failWatch { return &failWatch{okAt: start} }

// allFailing reports whether, as of now, no operation has succeeded for at
// least failWindow while at least one failed.
func (f *failWatch) allFailing(now time.Time, ok, errs int64) bool {
	if ok != f.ok {
		f.ok, f.okAt, f.errsAtOK = ok, now, errs
		return false
	}
	return errs > f.errsAtOK && now.Sub(f.okAt) >= failWindow
}

// firstFailure keeps the first error that any thread reports. Threads check
// an atomic flag first, so failing operations do not queue on the mutex.
type firstFailure struct {
	set atomic.Bool
	mu  sync.Mutex
	err error
}

func (f *firstFailure) record(err error) {
	if f.set.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
		f.set.Store(true)
	}
}

func (f *firstFailure) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// AllFailingError is the reason a load or workload stops when every
// operation has failed for a second: it carries the first failure.
type AllFailingError struct {
	Window time.Duration
	First  error
}

func (e *AllFailingError) Error() string {
	return fmt.Sprintf("every operation failed for %v, the first with: %v", e.Window, e.First)
}

// Unwrap returns the first failure.
func (e *AllFailingError) Unwrap() error { return e.First }

// failureCause is why a load or workload whose every operation failed for
// a second stops: its server went down, if down (when set) says so, else
// an *AllFailingError quoting first.
func failureCause(down func() error, first error) error {
	if down != nil {
		if err := down(); err != nil {
			return err
		}
	}
	return &AllFailingError{Window: failWindow, First: first}
}

// upTime is the time a load or workload that began at start and ran for
// elapsed counts: all of it, unless ctx was cancelled because the server
// went down (a DownError); then the time the server was up, until it went
// down or, if later, the end of the last success (lastOK, from start).
func upTime(ctx context.Context, start time.Time, lastOK, elapsed time.Duration) time.Duration {
	var down DownError
	if !errors.As(context.Cause(ctx), &down) {
		return elapsed
	}
	return min(max(down.DownAt().Sub(start), lastOK, 0), elapsed)
}
