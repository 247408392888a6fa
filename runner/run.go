package runner

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"wtd/engine"
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

// Run is a run that is recorded and holds the lock; Play carries it out.
type Run struct {
	*engine.Run
	pb    Playbook
	lock  *hostctl.ExperimentLock
	hooks Hooks
	errs  io.Writer
	start time.Time
}

// Result is how a run ended.
type Result struct {
	RunID  int64
	Status string // engine.StatusOK, StatusFailed or StatusAborted
	Reason string // why it did not end ok
	// Err is what stopped the run: the playbook's error (a
	// *luabind.ScriptError), the results database's, a panic; nil when ok.
	Err error
	// Duration is from the start of the run to its recorded end.
	Duration time.Duration
}

// Start records a run of pb with cfg (engine.StartRun) under lock, which
// the caller took (nil: no lock) and which Play releases. cfg.Trigger says
// what started it. The run's context is ctx's child: cancelling ctx, or
// Abort, aborts the run.
func Start(ctx context.Context, pb Playbook, lock *hostctl.ExperimentLock, cfg engine.Config, hooks Hooks) (*Run, error) {
	start := time.Now()
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
	return &Run{Run: r, pb: pb, lock: lock, hooks: hooks, errs: cfg.Errors, start: start}, nil
}

// Play runs the playbook and records the run's end: ok, failed (the
// playbook or the results database failed) or aborted (its context was
// cancelled: the current step stops and the servers are shut down). The
// servers the run started are stopped and the lock released however it
// ends, a panic included.
func (r *Run) Play() (res Result) {
	defer r.lock.Release()
	res.RunID = r.ID
	defer func() {
		if p := recover(); p != nil {
			if r.errs != nil {
				fmt.Fprintf(r.errs, "%s\n", debug.Stack())
			}
			res = r.finish(engine.StatusFailed, fmt.Sprintf("panic: %v", p), fmt.Errorf("panic: %v", p))
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
	_, perr := luabind.RunPlaybook(r.Context(), r.pb.Path, r.pb.Source,
		luabind.Env{Run: r.Run, Overrides: r.pb.Overrides, Out: r.hooks.Out, Progress: progress})
	switch {
	case perr == nil && r.StoreErr() == nil:
		return r.finish(engine.StatusOK, "", nil)
	case r.StoreErr() != nil:
		return r.finish(engine.StatusFailed, r.StoreErr().Error(), r.StoreErr())
	case r.Context().Err() != nil:
		return r.finish(engine.StatusAborted, "interrupted: "+context.Cause(r.Context()).Error(), perr)
	default:
		return r.finish(engine.StatusFailed, perr.Error(), perr)
	}
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
	hostctl.StopAll(ctx)
	return Result{RunID: r.ID, Status: status, Reason: reason, Err: cause, Duration: time.Since(r.start)}
}
