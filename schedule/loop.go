package schedule

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"wtd/engine/store"
)

// Serve runs the scheduler until SIGTERM or SIGINT arrives on signals, or
// ctx ends: catch-up and windows first, then every fire and transition in
// time. SIGHUP calls reload: a config it refuses is logged (with the
// reason) and recorded, and the old one stays in force. Stopping aborts
// the run going, closes the open windows and returns nil, all within
// Options.StopBudget.
func (s *Scheduler) Serve(ctx context.Context, signals <-chan os.Signal, reload func() (Config, error)) error {
	s.start(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		timer.Reset(s.untilDue(s.opts.Now()))
		select {
		case <-ctx.Done():
			s.Stop(fmt.Errorf("daemon stopping: %w", context.Cause(ctx)))
			return nil
		case sig := <-signals:
			if sig == syscall.SIGHUP {
				s.reload(ctx, reload)
				continue
			}
			s.opts.Log.Info("stopping", "signal", sig.String())
			s.Stop(fmt.Errorf("daemon stopping (%s)", sig))
			return nil
		case <-s.wake:
		case <-timer.C:
			s.tick(ctx, s.opts.Now())
		}
	}
}

// start opens the windows the daemon starts inside, fires each schedule's
// catch-up and computes the first fire times.
func (s *Scheduler) start(ctx context.Context) {
	now := s.opts.Now()
	lastAlive := s.lastAlive(ctx)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindDaemon, Event: "start", Detail: s.cfg.Path,
		Attrs: map[string]any{"pid": os.Getpid(), "schedules": len(s.cfg.Schedules), "windows": len(s.cfg.Windows)}})
	s.opts.Log.Info("daemon start", "config", s.cfg.Path, "schedules", len(s.cfg.Schedules), "windows", len(s.cfg.Windows))
	s.mu.Lock()
	for _, sch := range s.cfg.Schedules {
		s.next[sch.Name] = sch.Spec.Next(now)
	}
	s.initWindows(now, s.cfg.Windows, "daemon starts inside the window")
	s.mu.Unlock()
	s.applyDue(ctx, now)
	for _, sch := range s.cfg.Schedules {
		if missed, ok := s.missed(ctx, sch, lastAlive, now); ok {
			s.opts.Log.Info("catch-up", "schedule", sch.Name, "missed", missed.Format(time.RFC3339))
			s.mu.Lock()
			s.fireLocked(ctx, sch, "catch-up "+sch.Name)
			s.mu.Unlock()
		}
	}
}

// lastAlive is the last moment a previous daemon is known to have been
// up: its last start or stop.
func (s *Scheduler) lastAlive(ctx context.Context) time.Time {
	evs, err := s.opts.Store.ScheduleEvents(ctx, store.EventQuery{Kind: store.KindDaemon, Events: []string{"start", "stop", "reload"}, Limit: 1})
	if err != nil || len(evs) == 0 {
		return time.Time{}
	}
	return evs[0].TS
}

// missed returns the fire time of sch that a down daemon missed, if one
// lies within catch_up of now and after anything the history says of sch
// and after the previous daemon's last sign of life. A schedule no daemon
// ever ran is not caught up.
func (s *Scheduler) missed(ctx context.Context, sch Schedule, lastAlive, now time.Time) (time.Time, bool) {
	if sch.CatchUp <= 0 || lastAlive.IsZero() {
		return time.Time{}, false
	}
	seen := lastAlive
	if evs, err := s.opts.Store.ScheduleEvents(ctx, store.EventQuery{Kind: store.KindSchedule, Name: sch.Name, Limit: 1}); err == nil && len(evs) > 0 && evs[0].TS.After(seen) {
		seen = evs[0].TS
	}
	if from := now.Add(-sch.CatchUp); from.After(seen) {
		seen = from
	}
	return lastFire(sch.Spec, seen, now)
}

// untilDue is how long the loop may sleep.
func (s *Scheduler) untilDue(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := now.Add(time.Hour)
	for _, t := range s.next {
		if t.Before(due) {
			due = t
		}
	}
	for _, w := range s.windows {
		if t := w.due(); !t.IsZero() && t.Before(due) {
			due = t
		}
	}
	for _, w := range s.retiring {
		if w.retryAt.Before(due) {
			due = w.retryAt
		}
	}
	return max(due.Sub(now), 0)
}

// tick fires the schedules whose time has come and moves the windows.
func (s *Scheduler) tick(ctx context.Context, now time.Time) {
	s.mu.Lock()
	for _, sch := range s.cfg.Schedules {
		if t, ok := s.next[sch.Name]; ok && !t.After(now) {
			s.next[sch.Name] = nextAfter(sch.Spec, t, now)
			s.fireLocked(ctx, sch, "schedule "+sch.Name)
		}
	}
	s.mu.Unlock()
	s.applyDue(ctx, now)
}

// reload swaps in the config reload returns, or keeps the old one.
func (s *Scheduler) reload(ctx context.Context, reload func() (Config, error)) {
	cfg, err := reload()
	if err != nil {
		s.opts.Log.Error("reload refused, the old config stays in force", "error", err)
		s.record(ctx, store.ScheduleEvent{Kind: store.KindDaemon, Event: "reload-refused", Detail: err.Error()})
		return
	}
	s.Reload(ctx, cfg)
}

// Reload puts cfg in force: schedules fire on their new specs from now;
// a window whose definition is unchanged keeps its state, an open one that
// changed or went is closed first (but one marked leave_open: it is left
// as it is), and a new one the daemon is inside opens at once. A close
// that fails is retried until it succeeds, and a new definition of the
// window on the same server opens only then. The run going goes on.
func (s *Scheduler) Reload(ctx context.Context, cfg Config) {
	now := s.opts.Now()
	s.mu.Lock()
	old := s.cfg
	s.cfg = cfg
	s.next = map[string]time.Time{}
	for _, sch := range cfg.Schedules {
		s.next[sch.Name] = sch.Spec.Next(now)
	}
	var closing []*windowState
	var added []Window
	kept := map[string]*windowState{}
	for _, w := range cfg.Windows {
		if st, ok := s.windows[w.Name]; ok && sameWindow(st.w, w) {
			st.w = w
			kept[w.Name] = st
			continue
		}
		added = append(added, w)
	}
	for name, st := range s.windows {
		if _, ok := kept[name]; !ok && (st.applied || st.want) {
			closing = append(closing, st)
		}
	}
	s.windows = kept
	s.mu.Unlock()
	for _, st := range closing {
		if st.w.LeaveOpen {
			s.opts.Log.Info("window left open (leave_open)", "window", st.w.Name, "why", "config reloaded")
			continue
		}
		s.transition(ctx, st, false, "config reloaded")
	}
	s.mu.Lock()
	for _, st := range closing {
		if !st.w.LeaveOpen && st.failing {
			st.want = false
			s.retiring = append(s.retiring, st)
		}
	}
	s.initWindows(now, added, "config reloaded inside the window")
	s.mu.Unlock()
	s.applyDue(ctx, now)
	s.opts.Log.Info("reload", "config", cfg.Path, "schedules", len(cfg.Schedules), "windows", len(cfg.Windows))
	s.record(ctx, store.ScheduleEvent{Kind: store.KindDaemon, Event: "reload", Detail: cfg.Path,
		Attrs: map[string]any{"schedules": len(cfg.Schedules), "windows": len(cfg.Windows), "previous_schedules": len(old.Schedules)}})
	s.poke()
}

// Stop stops firing, aborts the run going with cause (it ends aborted,
// its servers shut down), closes the open windows (but those marked
// leave_open) and records the stop, within Options.StopBudget.
func (s *Scheduler) Stop(cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StopBudget)
	defer cancel()
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	cur := s.current
	s.mu.Unlock()
	s.cancelRuns(cause)
	if cur != nil {
		s.opts.Log.Info("aborting run", "run", cur.runID, "schedule", cur.schedule, "reason", cause.Error())
	}
	// Wait for the runs to end and their ends to be recorded (no run starts
	// once stopped is set: fires check it under mu, where runs.Add is).
	ended := make(chan struct{})
	go func() { s.runs.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(s.opts.StopBudget * 3 / 4):
		s.opts.Log.Error("a run did not end in time")
	}
	s.closeAll(ctx)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindDaemon, Event: "stop", Detail: cause.Error()})
	s.opts.Log.Info("daemon stopped")
}

// errStopping words a transition cut short by the end of the daemon.
var errStopping = errors.New("daemon stopping")
