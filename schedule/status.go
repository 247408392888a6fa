package schedule

import (
	"slices"
	"time"

	"wtd/engine/store"
)

// ScheduleStatus is a schedule as the API and `wtd schedules` show it.
type ScheduleStatus struct {
	Name     string         `json:"name"`
	Cron     string         `json:"cron"`
	Playbook string         `json:"playbook"`
	Params   map[string]any `json:"params,omitempty"`
	Timeout  string         `json:"timeout,omitempty"`
	CatchUp  string         `json:"catch_up,omitempty"`
	Next     []time.Time    `json:"next"`
	// Running is the id of the schedule's run going now (0: none).
	Running int64 `json:"running,omitempty"`
}

// WindowStatus is a window as the API and `wtd schedules` show it.
type WindowStatus struct {
	Name      string      `json:"name"`
	Cron      string      `json:"cron"`
	Duration  string      `json:"duration"`
	Server    string      `json:"server"`
	LeaveOpen bool        `json:"leave_open,omitempty"`
	Next      []time.Time `json:"next"`
	// Open says whether the server holds the open settings now; Wanted
	// whether the clock says the window is open.
	Open     bool       `json:"open"`
	Wanted   bool       `json:"wanted"`
	ClosesAt *time.Time `json:"closes_at,omitempty"`
	// Failing says the last transition failed: Error says why, RetryAt
	// when it is tried again.
	Failing  bool        `json:"failing"`
	Failures int         `json:"failures,omitempty"`
	Error    string      `json:"error,omitempty"`
	RetryAt  *time.Time  `json:"retry_at,omitempty"`
	Last     *Transition `json:"last_transition,omitempty"`
}

// Describe returns cfg's schedules and windows with their next n fire
// times after now, from the config alone; URI passwords in parameters and
// servers are masked.
func Describe(cfg Config, now time.Time, n int) ([]ScheduleStatus, []WindowStatus) {
	scheds := make([]ScheduleStatus, 0, len(cfg.Schedules))
	for _, s := range cfg.Schedules {
		st := ScheduleStatus{Name: s.Name, Cron: s.Cron, Playbook: s.Playbook, Params: store.RedactMap(s.Params), Next: NextTimes(s.Spec, now, n)}
		if s.Timeout > 0 {
			st.Timeout = s.Timeout.String()
		}
		if s.CatchUp > 0 {
			st.CatchUp = s.CatchUp.String()
		}
		scheds = append(scheds, st)
	}
	wins := make([]WindowStatus, 0, len(cfg.Windows))
	for _, w := range cfg.Windows {
		ws := WindowStatus{Name: w.Name, Cron: w.Cron, Duration: w.Duration.String(), Server: store.RedactURI(w.Server),
			LeaveOpen: w.LeaveOpen, Next: NextTimes(w.Spec, now, n)}
		if opened, ok := lastFire(w.Spec, now.Add(-w.Duration), now); ok {
			closes := opened.Add(w.Duration)
			ws.Wanted, ws.ClosesAt = true, &closes
		}
		wins = append(wins, ws)
	}
	return scheds, wins
}

// Status returns the schedules and windows in force with their live
// state and next n fire times.
func (s *Scheduler) Status(n int) ([]ScheduleStatus, []WindowStatus) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	scheds, wins := Describe(s.cfg, now, n)
	for i := range scheds {
		if c := s.current; c != nil && c.schedule == scheds[i].Name {
			scheds[i].Running = c.runID
		}
		// The fire times the loop keeps: an @every schedule fires a
		// period after its last fire, not a period after now.
		if next, ok := s.next[scheds[i].Name]; ok && n > 0 {
			scheds[i].Next = append([]time.Time{next}, NextTimes(s.cfg.Schedules[i].Spec, next, n-1)...)
		}
	}
	for i := range wins {
		st, ok := s.windows[wins[i].Name]
		if !ok {
			continue
		}
		w := &wins[i]
		w.Open, w.Wanted, w.Failing, w.Failures, w.Error, w.Last = st.applied, st.want, st.failing, st.failures, store.RedactURI(st.lastErr), st.last
		w.ClosesAt, w.RetryAt = nil, nil
		if st.want {
			t := st.closesAt
			w.ClosesAt = &t
		}
		if st.failing {
			t := st.retryAt
			w.RetryAt = &t
		}
	}
	for _, st := range s.retiring {
		wins = retiringStatus(wins, st)
	}
	return scheds, wins
}

// retiringStatus shows a definition a reload dropped or changed whose
// close is failing: as the window's failure when the config still has a
// window of its name, else as a window of its own.
func retiringStatus(wins []WindowStatus, st *windowState) []WindowStatus {
	retryAt := st.retryAt
	i := slices.IndexFunc(wins, func(w WindowStatus) bool { return w.Name == st.w.Name })
	if i >= 0 {
		w := &wins[i]
		w.Failing, w.Failures, w.RetryAt = true, st.failures, &retryAt
		w.Error = "closing its previous definition: " + st.lastErr
		return wins
	}
	return append(wins, WindowStatus{Name: st.w.Name, Cron: st.w.Cron, Duration: st.w.Duration.String(),
		Server: store.RedactURI(st.w.Server), Next: []time.Time{}, Open: st.applied, Failing: true,
		Failures: st.failures, Error: st.lastErr, RetryAt: &retryAt, Last: st.last})
}
