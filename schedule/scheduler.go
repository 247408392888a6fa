package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"wtd/engine/store"
	"wtd/hostctl"
)

// Defaults of Options.
const (
	DefaultRetryMin     = time.Second
	DefaultRetryMax     = time.Minute
	DefaultApplyTimeout = 10 * time.Second
	// DefaultStopBudget is how long stopping may take in all: the daemon
	// exits within 30 s of SIGTERM.
	DefaultStopBudget = 25 * time.Second
)

// Options are what a Scheduler needs.
type Options struct {
	Store *store.Store
	// StateDir holds the host's experiment lock (as for wtd run).
	StateDir string
	Launch   Launcher
	Log      *slog.Logger
	// OnRunEnd hooks see every run the scheduler started when it ends.
	OnRunEnd []RunEndHook
	// Recorded is called once a run's end is recorded, with the hooks'
	// attributes (nil: nothing): the daemon queues the run's push then.
	Recorded func(RunEnd)
	// RetryMin and RetryMax bound the backoff of a failed window
	// transition: it doubles from RetryMin up to RetryMax.
	RetryMin, RetryMax time.Duration
	// ApplyTimeout bounds one window transition (connect, read, set, read).
	ApplyTimeout time.Duration
	// StopBudget bounds Stop: aborting the run and closing the windows.
	StopBudget time.Duration
	// Now is the scheduler's clock (default time.Now): the fire times,
	// catch-up, windows and the history's timestamps all read it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.RetryMin <= 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.ApplyTimeout <= 0 {
		o.ApplyTimeout = DefaultApplyTimeout
	}
	if o.StopBudget <= 0 {
		o.StopBudget = DefaultStopBudget
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Scheduler fires a config's schedules and keeps its windows. One run at
// a time: a fire that finds the previous run still going, or the host's
// experiment lock held, is skipped and the skip recorded, never queued.
type Scheduler struct {
	opts Options

	mu      sync.Mutex
	cfg     Config
	next    map[string]time.Time // schedule -> next fire time
	windows map[string]*windowState
	// retiring are definitions a reload dropped or changed whose close
	// failed: retried as any transition until the server takes it.
	retiring []*windowState
	current  *active
	stopped  bool

	wake       chan struct{}
	runsCtx    context.Context
	cancelRuns context.CancelCauseFunc
	runs       sync.WaitGroup
}

// active is the run the daemon has going.
type active struct {
	schedule string
	trigger  string
	runID    int64
	started  time.Time
	abort    func(error)
}

// New returns a scheduler for cfg; Run starts it.
func New(cfg Config, opts Options) *Scheduler {
	s := &Scheduler{opts: opts.withDefaults(), cfg: cfg, next: map[string]time.Time{}, windows: map[string]*windowState{},
		wake: make(chan struct{}, 1)}
	s.runsCtx, s.cancelRuns = context.WithCancelCause(context.Background())
	return s
}

// Config returns the config in force.
func (s *Scheduler) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// ErrUnknown is a schedule or window the config does not define.
var ErrUnknown = errors.New("not defined in the config")

// BusyError is a fire refused because a run is going: the daemon's own
// previous one, or another experiment holding the host's lock.
type BusyError struct {
	Holder string // who holds it, in words
	RunID  int64  // the run going, when known
}

func (e *BusyError) Error() string { return "busy: " + e.Holder }

// ErrStopped is a fire after Stop.
var ErrStopped = errors.New("the daemon is stopping")

// FireNow fires schedule name at once with trigger "api NAME" and returns
// the run's id; a *BusyError when a run is going (the skip is recorded),
// ErrUnknown when there is no such schedule.
func (s *Scheduler) FireNow(ctx context.Context, name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sch, ok := s.cfg.Schedule(name)
	if !ok {
		return 0, fmt.Errorf("schedule %q: %w", name, ErrUnknown)
	}
	return s.fireLocked(ctx, sch, "api "+name)
}

// Abort aborts run id if it is the daemon's current run, with cause as its
// reason; it reports whether it was.
func (s *Scheduler) Abort(id int64, cause error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil || s.current.runID != id {
		return false
	}
	s.current.abort(cause)
	return true
}

// Current returns the id of the run the daemon has going (0: none) and
// its schedule.
func (s *Scheduler) Current() (int64, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return 0, ""
	}
	return s.current.runID, s.current.schedule
}

// fireLocked starts a run of sch unless one is going; s.mu is held.
func (s *Scheduler) fireLocked(ctx context.Context, sch Schedule, trigger string) (int64, error) {
	if s.stopped {
		return 0, ErrStopped
	}
	if c := s.current; c != nil {
		busy := &BusyError{RunID: c.runID, Holder: fmt.Sprintf("run %d (%s) still running", c.runID, c.trigger)}
		s.skip(ctx, sch.Name, trigger, busy.Holder)
		return 0, busy
	}
	lock, err := hostctl.TryLock(hostctl.LockPath(s.opts.StateDir), hostctl.LockHolder{Playbook: sch.Playbook, Trigger: trigger, DB: s.opts.Store.Path()})
	var le *hostctl.LockedError
	if errors.As(err, &le) {
		busy := &BusyError{RunID: le.Holder.RunID, Holder: le.Holder.String() + " holds the experiment lock"}
		s.skip(ctx, sch.Name, trigger, busy.Holder)
		return 0, busy
	}
	if err != nil {
		s.record(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: sch.Name, Event: "error", Detail: err.Error(),
			Attrs: map[string]any{"trigger": trigger}})
		return 0, err
	}
	runCtx, cancel := s.runsCtx, context.CancelFunc(func() {})
	if sch.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(runCtx, sch.Timeout, fmt.Errorf("timeout %s reached", sch.Timeout))
	}
	h, err := s.opts.Launch(runCtx, Job{Schedule: sch, Trigger: trigger, Config: s.cfg, Lock: lock})
	if err != nil {
		cancel()
		lock.Release()
		s.opts.Log.Error("fire failed", "schedule", sch.Name, "trigger", trigger, "error", err)
		s.record(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: sch.Name, Event: "error", Detail: err.Error(),
			Attrs: map[string]any{"trigger": trigger}})
		return 0, err
	}
	a := &active{schedule: sch.Name, trigger: trigger, runID: h.RunID, started: s.opts.Now(), abort: h.Abort}
	s.current = a
	s.opts.Log.Info("fire", "schedule", sch.Name, "trigger", trigger, "run", h.RunID, "playbook", sch.Playbook)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: sch.Name, Event: "fire", RunID: h.RunID,
		Attrs: map[string]any{"trigger": trigger}})
	s.runs.Add(1)
	go s.await(a, h, cancel)
	return h.RunID, nil
}

// await waits for a run to end and records the end.
func (s *Scheduler) await(a *active, h *Handle, cancel context.CancelFunc) {
	defer s.runs.Done()
	end := <-h.Done
	cancel()
	// The run is over (and its lock released): the next fire may start
	// while its end is judged and recorded.
	s.mu.Lock()
	if s.current == a {
		s.current = nil
	}
	s.mu.Unlock()
	end.Schedule, end.Trigger, end.RunID = a.schedule, a.trigger, a.runID
	if end.Started.IsZero() {
		end.Started = a.started
	}
	ctx := context.Background()
	attrs := map[string]any{"status": end.Status, "trigger": end.Trigger, "duration_s": end.Duration.Seconds()}
	for _, hook := range s.opts.OnRunEnd {
		for k, v := range hook(ctx, end) {
			attrs[k] = v
		}
	}
	s.opts.Log.Info("run end", "schedule", end.Schedule, "run", end.RunID, "status", end.Status,
		"duration", end.Duration.Round(time.Millisecond).String(), "reason", end.Reason)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: end.Schedule, Event: "end", RunID: end.RunID,
		Detail: end.Reason, Attrs: attrs})
	if s.opts.Recorded != nil {
		s.opts.Recorded(end)
	}
}

// skip records a fire that did not happen.
func (s *Scheduler) skip(ctx context.Context, name, trigger, why string) {
	s.opts.Log.Warn("skip", "schedule", name, "trigger", trigger, "reason", why)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: name, Event: "skip", Detail: why,
		Attrs: map[string]any{"trigger": trigger}})
}

// record adds an event to the history; a failure is logged.
func (s *Scheduler) record(ctx context.Context, ev store.ScheduleEvent) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ev.TS.IsZero() {
		ev.TS = s.opts.Now()
	}
	if _, err := s.opts.Store.AddScheduleEvent(ctx, ev); err != nil {
		s.opts.Log.Error("record history", "kind", ev.Kind, "name", ev.Name, "event", ev.Event, "error", err)
	}
}

// poke wakes the loop to look at the times again.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
