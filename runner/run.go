package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"wtd/compare"
	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/luabind"
)

// finishTimeout bounds recording a run's end and stopping its servers.
const finishTimeout = 2 * time.Minute

// Hooks are a caller's views of a run; each may be nil.
type Hooks struct {
	// Out receives report tables, print(), io.write() and log() lines.
	Out io.Writer
	// Progress is called with "STEP: TASK" labels of loads and workloads
	// (see luabind.Env.Progress).
	Progress func(label string, done, total int64, duration time.Duration)
	// Finishing is called just before the run's end is recorded.
	Finishing func()
}

// DefaultGrace is how long Play waits for a stopped playbook to return.
const DefaultGrace = 3 * time.Second

// Limits bound a run.
type Limits struct {
	// MaxMemory is the most memory the process may hold for the run, in
	// bytes (0: no limit). It is the Go runtime's soft limit
	// (debug.SetMemoryLimit), and a watchdog reads what the runtime holds
	// every 100 ms: past it the run is stopped and ends failed. One string
	// built by string.rep may take a quarter of it.
	MaxMemory int64
	// Grace is how long Play waits for the playbook to return once the run
	// is stopped (DefaultGrace when 0): a Go call that does not watch the
	// run's context is left behind, and the run ends without it.
	Grace time.Duration
	// PatternBudget bounds one pattern match (luabind.Env.PatternBudget).
	PatternBudget time.Duration
}

// Run is a run that is recorded and holds the lock; Play carries it out.
type Run struct {
	*engine.Run
	pb     Playbook
	lock   *hostctl.ExperimentLock
	hooks  Hooks
	limits Limits
	errs   io.Writer
	start  time.Time
	store  *store.Store
}

// Result is how a run ended.
type Result struct {
	RunID  int64
	Status string // record.StatusOK, StatusFailed or StatusAborted
	Reason string // why it did not end ok, URI passwords masked as recorded
	// Err is what stopped the run: the playbook's error (a
	// *luabind.ScriptError), the results database's, a panic; nil when ok.
	Err error
	// Duration is from the start of the run to its recorded end.
	Duration time.Duration
	// LeftBehind is true when the playbook had not returned within the
	// grace after the run was stopped: its goroutine still runs, and the
	// process should exit.
	LeftBehind bool
}

// Start records a run of pb with cfg (engine.StartRun) under lock, which
// the caller took (nil: no lock) and which Play releases; the run records
// the lock's file (cfg.LockPath). cfg.Trigger says what started it. The
// run's context is ctx's child: cancelling ctx, or Abort, aborts the run.
func Start(ctx context.Context, pb Playbook, lock *hostctl.ExperimentLock, cfg engine.Config, hooks Hooks, limits Limits) (*Run, error) {
	start := time.Now()
	if lock != nil {
		cfg.LockPath = lock.Path()
	}
	r, err := engine.StartRun(ctx, cfg, engine.RunInfo{PlaybookPath: pb.Path, Playbook: pb.Source, Params: stringParams(pb.Overrides)})
	if err != nil {
		lock.Release()
		return nil, err
	}
	if lock != nil {
		if err := lock.SetRun(r.ID); err != nil {
			r.Eventf("warn", "run", "%v", err)
		}
	}
	if limits.Grace <= 0 {
		limits.Grace = DefaultGrace
	}
	return &Run{Run: r, pb: pb, lock: lock, hooks: hooks, limits: limits, errs: cfg.Errors, start: start, store: cfg.Store}, nil
}

// Play runs the playbook and records the run's end: ok, failed (the
// playbook or the results database failed, or the run went past one of
// its limits) or aborted (its context was cancelled: the current step
// stops and the servers are shut down). The servers the run started are
// stopped and the lock released however it ends, a panic included. Once
// the run is stopped, Play returns within its grace and the time it takes
// to record the end, whatever the playbook does.
func (r *Run) Play() (res Result) {
	defer r.lock.Release()
	defer r.watchMemory()()
	played := make(chan error, 1)
	go func() { played <- r.playbook() }()
	select {
	case err := <-played:
		return r.end(err)
	case <-r.Context().Done():
	}
	grace := time.NewTimer(r.limits.Grace)
	defer grace.Stop()
	select {
	case err := <-played:
		return r.end(err)
	case <-grace.C:
		err := fmt.Errorf("the playbook did not return within %s of the run's stop", r.limits.Grace)
		res := r.end(err)
		res.LeftBehind = true
		return res
	}
}

// playbook runs the Lua playbook; a panic is its error.
func (r *Run) playbook() (err error) {
	defer func() {
		if p := recover(); p != nil {
			if r.errs != nil {
				fmt.Fprintf(r.errs, "%s\n", debug.Stack())
			}
			err = &panicError{v: p}
		}
	}()
	progress := r.hooks.Progress
	if progress != nil {
		progress = func(task string, done, total int64, duration time.Duration) {
			if step := r.CurrentStep(); step != "" {
				task = step + ": " + task
			}
			r.hooks.Progress(task, done, total, duration)
		}
	}
	var maxString int64
	if r.limits.MaxMemory > 0 {
		maxString = r.limits.MaxMemory / 4
	}
	_, err = luabind.RunPlaybook(r.Context(), r.pb.Path, r.pb.Source,
		luabind.Env{Run: r.Run, Overrides: r.pb.Overrides, Out: r.hooks.Out, Progress: progress,
			PatternBudget: r.limits.PatternBudget, MaxString: maxString})
	return err
}

// panicError is a playbook run that panicked.
type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.v) }

// end records how the playbook's error perr ends the run.
func (r *Run) end(perr error) Result {
	var pe *panicError
	var le *engine.LimitError
	cause := context.Cause(r.Context())
	switch {
	case errors.As(perr, &pe):
		return r.finish(record.StatusFailed, pe.Error(), perr)
	case perr == nil && r.StoreErr() == nil:
		if failed, err := r.checkThresholds(); err != nil {
			return r.finish(record.StatusFailed, "check the thresholds: "+err.Error(), err)
		} else if failed != "" {
			return r.finish(record.StatusFailed, failed, errors.New(failed))
		}
		return r.finish(record.StatusOK, "", nil)
	case r.StoreErr() != nil:
		return r.finish(record.StatusFailed, r.StoreErr().Error(), r.StoreErr())
	case r.Context().Err() != nil && errors.As(cause, &le):
		return r.finish(record.StatusFailed, le.Msg, le)
	case r.Context().Err() != nil:
		return r.finish(record.StatusAborted, "interrupted: "+cause.Error(), perr)
	default:
		return r.finish(record.StatusFailed, perr.Error(), perr)
	}
}

// checkThresholds checks and records the thresholds the playbook
// declared; it returns the failed ones in words ("" when all held).
func (r *Run) checkThresholds() (string, error) {
	ths := r.Thresholds()
	if len(ths) == 0 {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), finishTimeout)
	defer cancel()
	run, err := r.store.GetRun(ctx, r.ID)
	if err != nil {
		return "", err
	}
	res, err := compare.Thresholds(ctx, r.store, run, r.Steps(), ths)
	if err != nil {
		return "", err
	}
	if err := r.store.SetThresholds(ctx, r.ID, res); err != nil {
		return "", err
	}
	for _, t := range res {
		level := "info"
		if t.State == store.ThresholdFailed {
			level = "error"
		}
		r.Eventf(level, "run", "threshold %s: %s", t.State, t.Reason)
	}
	return compare.FailedThresholds(res), nil
}

// finish records the end and stops every server, within finishTimeout.
func (r *Run) finish(status, reason string, cause error) Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), finishTimeout)
	defer cancel()
	if r.hooks.Finishing != nil {
		r.hooks.Finishing()
	}
	if err := r.Finish(ctx, status, reason); err != nil && r.errs != nil {
		fmt.Fprintf(r.errs, "wtd: finishing run %d: %v\n", r.ID, err)
	}
	// Finish stopped the run's servers; this stops one whose start was
	// under way then.
	hostctl.StopOwned(ctx, r.Run)
	return Result{RunID: r.ID, Status: status, Reason: store.RedactURI(reason), Err: cause, Duration: time.Since(r.start)}
}
