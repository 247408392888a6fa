package schedule

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"wtd/engine/store"
)

// windowState is what the scheduler knows of one window.
type windowState struct {
	w        Window
	nextOpen time.Time
	closesAt time.Time // while open (wanted open)
	want     bool      // the window is open by the clock
	applied  bool      // the server last took the open settings
	failing  bool      // the last transition failed; retried at retryAt
	failures int
	retryAt  time.Time
	lastErr  string
	last     *Transition // the last transition that succeeded
	// openWhy says why the window is wanted open while its opening is
	// still to be made: it opened by the clock, or the daemon started, or
	// the config was reloaded, inside it.
	openWhy string
}

// due returns when the window next needs attention.
func (w *windowState) due() time.Time {
	t := w.nextOpen
	if w.want && (t.IsZero() || w.closesAt.Before(t)) {
		t = w.closesAt
	}
	if w.failing && w.retryAt.Before(t) {
		t = w.retryAt
	}
	return t
}

// initWindows sets up the state of ws at now: a window the daemon is
// inside is wanted open until its end, why says how the daemon came to be
// inside it. s.mu is held.
func (s *Scheduler) initWindows(now time.Time, ws []Window, why string) {
	for _, w := range ws {
		st := &windowState{w: w, nextOpen: w.Spec.Next(now)}
		if opened, ok := lastFire(w.Spec, now.Add(-w.Duration), now); ok {
			st.want, st.closesAt, st.openWhy = true, opened.Add(w.Duration), why
		}
		s.windows[w.Name] = st
	}
}

// applyDue moves every window whose time has come: opens, closes and
// retries of failed transitions.
func (s *Scheduler) applyDue(ctx context.Context, now time.Time) {
	s.retryRetiring(ctx, now)
	type move struct {
		st   *windowState
		open bool
		why  string
	}
	var moves []move
	s.mu.Lock()
	for _, name := range s.windowNames() {
		st := s.windows[name]
		switch {
		case !st.nextOpen.After(now):
			st.closesAt = st.nextOpen.Add(st.w.Duration)
			st.nextOpen = st.w.Spec.Next(now)
			st.want, st.failures, st.openWhy = true, 0, "window opens"
			moves = append(moves, move{st, true, st.openWhy})
		case st.want && !st.closesAt.After(now):
			st.want, st.failures = false, 0
			if !st.applied && st.failing {
				// It never opened: nothing to undo.
				st.failing = false
				s.opts.Log.Error("window ended without opening", "window", st.w.Name, "error", st.lastErr)
				continue
			}
			moves = append(moves, move{st, false, "window closes"})
		case st.failing && !st.retryAt.After(now):
			moves = append(moves, move{st, st.want, fmt.Sprintf("retry %d", st.failures)})
		case st.want && !st.applied && !st.failing:
			moves = append(moves, move{st, true, st.openWhy})
		}
	}
	// An opening waits for the close of the window's previous definition
	// on the same server: that close, retried later, would undo it.
	moves = slices.DeleteFunc(moves, func(m move) bool { return m.open && s.retiringOn(m.st.w) })
	s.mu.Unlock()
	for _, m := range moves {
		s.transition(ctx, m.st, m.open, m.why)
	}
}

// retryRetiring retries the closes of the definitions a reload dropped or
// changed that are due, and forgets those the server took.
func (s *Scheduler) retryRetiring(ctx context.Context, now time.Time) {
	type retry struct {
		st  *windowState
		why string
	}
	var due []retry
	s.mu.Lock()
	for _, st := range s.retiring {
		if !st.retryAt.After(now) {
			due = append(due, retry{st, fmt.Sprintf("retry %d", st.failures)})
		}
	}
	s.mu.Unlock()
	for _, r := range due {
		s.transition(ctx, r.st, false, r.why)
	}
	s.mu.Lock()
	s.retiring = slices.DeleteFunc(s.retiring, func(st *windowState) bool { return !st.failing })
	s.mu.Unlock()
}

// retiringOn reports whether a previous definition of w on w's server is
// still to be closed. s.mu is held.
func (s *Scheduler) retiringOn(w Window) bool {
	return slices.ContainsFunc(s.retiring, func(st *windowState) bool { return st.w.Name == w.Name && st.w.Server == w.Server })
}

// windowNames returns the windows in config order. s.mu is held.
func (s *Scheduler) windowNames() []string {
	var names []string
	for _, w := range s.cfg.Windows {
		if _, ok := s.windows[w.Name]; ok {
			names = append(names, w.Name)
		}
	}
	return names
}

// transition applies a window's open or close settings, records it and,
// when it fails, plans the retry.
func (s *Scheduler) transition(ctx context.Context, st *windowState, open bool, why string) {
	event, params := "close", st.w.Close
	if open {
		event, params = "open", st.w.Open
	}
	actx, cancel := context.WithTimeout(ctx, s.opts.ApplyTimeout)
	tr, err := applyParams(actx, st.w.Server, params)
	cancel()
	now := s.opts.Now()
	s.mu.Lock()
	if err != nil {
		st.failing = true
		st.failures++
		st.lastErr = err.Error()
		st.retryAt = now.Add(backoff(st.failures, s.opts.RetryMin, s.opts.RetryMax))
	} else {
		st.failing, st.failures, st.lastErr = false, 0, ""
		st.applied = open
		st.last = &tr
	}
	failures, retryAt := st.failures, st.retryAt
	s.mu.Unlock()
	if err != nil {
		s.opts.Log.Error("window "+event+" failed", "window", st.w.Name, "why", why, "attempt", failures,
			"retry_at", retryAt.Format(time.RFC3339), "error", err)
		s.record(ctx, store.ScheduleEvent{Kind: store.KindWindow, Name: st.w.Name, Event: event + "-failed", Detail: err.Error(),
			Attrs: map[string]any{"why": why, "attempt": failures, "retry_at": retryAt.Format(time.RFC3339)}})
		s.poke()
		return
	}
	s.opts.Log.Info("window "+event, "window", st.w.Name, "why", why, "before", tr.Before, "after", tr.After)
	s.record(ctx, store.ScheduleEvent{Kind: store.KindWindow, Name: st.w.Name, Event: event, Detail: why,
		Attrs: map[string]any{"set": tr.Set, "before": tr.Before, "after": tr.After}})
}

// backoff is the wait before retry n (1, 2, ...): min doubled n-1 times,
// at most max.
func backoff(n int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}

// closeAll closes every window that is or may be open, but those marked
// leave_open, and the definitions a reload left to close, once each,
// within ctx.
func (s *Scheduler) closeAll(ctx context.Context) {
	s.mu.Lock()
	open := slices.Clone(s.retiring)
	for _, name := range s.windowNames() {
		st := s.windows[name]
		if (st.applied || st.want) && !st.w.LeaveOpen {
			open = append(open, st)
		}
		if st.w.LeaveOpen && st.applied {
			s.opts.Log.Info("window left open (leave_open)", "window", st.w.Name)
		}
	}
	s.mu.Unlock()
	for _, st := range open {
		if ctx.Err() != nil {
			s.opts.Log.Error("window not closed: no time left", "window", st.w.Name)
			continue
		}
		s.transition(ctx, st, false, errStopping.Error())
	}
}

// sameWindow reports whether two definitions of a window act alike.
func sameWindow(a, b Window) bool {
	a.Spec, b.Spec, a.Line, b.Line = nil, nil, 0, 0
	return reflect.DeepEqual(a, b)
}
