package schedule

import (
	"context"
	"time"

	"wtd/hostctl"
)

// Job is a run the scheduler starts.
type Job struct {
	Schedule Schedule
	// Trigger is what the run records as its trigger: "schedule NAME",
	// "api NAME" or "catch-up NAME".
	Trigger string
	// Config is the config in force (its mongod, allow_dirs, sampling).
	Config Config
	// Lock is the host's experiment lock, taken for the run: Launch hands
	// it to the run it starts, which releases it when it ends, or releases
	// it when it fails.
	Lock *hostctl.ExperimentLock
}

// Launcher starts a run of job with ctx as the run's parent context
// (cancelled to abort it; it carries the schedule's timeout) and returns
// once the run is recorded, or fails without recording one. It is called
// with the scheduler busy: it must not call back into the Scheduler.
type Launcher func(ctx context.Context, job Job) (*Handle, error)

// Handle is a run a Launcher started.
type Handle struct {
	RunID int64
	// Abort stops the run: it ends aborted with cause as its reason.
	Abort func(cause error)
	// Done receives how the run ended, once.
	Done <-chan RunEnd
}

// RunEnd is how a run the scheduler started ended.
type RunEnd struct {
	Schedule string
	Trigger  string
	RunID    int64
	Status   string // ok, failed or aborted
	Reason   string
	Started  time.Time
	Duration time.Duration
}

// RunEndHook is called when a run the scheduler started has ended, before
// the end is recorded in the schedule's history; the attributes it returns
// are recorded with the end (e.g. a regression verdict against the
// schedule's earlier runs).
type RunEndHook func(ctx context.Context, end RunEnd) map[string]any
