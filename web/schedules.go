package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"wtd/compare"
	"wtd/engine/store"
	"wtd/runner"
	"wtd/schedule"
)

// nextFires is how many fire times the API lists.
const nextFires = 5

// RunRef names a run and how it ended.
type RunRef struct {
	ID        int64     `json:"id"`
	Status    string    `json:"status"`
	Trigger   string    `json:"trigger"`
	StartedAt time.Time `json:"started_at"`
	// Verdict is the run's recorded regression verdict (null: none).
	Verdict *compare.RunVerdict `json:"verdict"`
}

// ScheduleView is a schedule in GET /api/v1/schedules: its spec and next
// fire times, its last run and how many fires were skipped.
type ScheduleView struct {
	schedule.ScheduleStatus
	LastRun *RunRef `json:"last_run"`
	Skips   int64   `json:"skips"`
}

// WindowView is a window in GET /api/v1/schedules: its spec, state and
// last transitions.
type WindowView struct {
	schedule.WindowStatus
	Recent []EventView `json:"recent"`
}

// EventView is an entry of the daemon's history.
type EventView struct {
	TS     time.Time      `json:"ts"`
	Event  string         `json:"event"`
	RunID  int64          `json:"run_id,omitempty"`
	Detail string         `json:"detail,omitempty"`
	Attrs  map[string]any `json:"attrs,omitempty"`
}

// SchedulesReply is the body of GET /api/v1/schedules.
type SchedulesReply struct {
	Schedules []ScheduleView `json:"schedules"`
	Windows   []WindowView   `json:"windows"`
}

// Views wraps a config's description (schedule.Describe) without history.
func Views(scheds []schedule.ScheduleStatus, wins []schedule.WindowStatus) SchedulesReply {
	out := SchedulesReply{Schedules: []ScheduleView{}, Windows: []WindowView{}}
	for _, s := range scheds {
		out.Schedules = append(out.Schedules, ScheduleView{ScheduleStatus: s})
	}
	for _, w := range wins {
		out.Windows = append(out.Windows, WindowView{WindowStatus: w, Recent: []EventView{}})
	}
	return out
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) {
	reply, err := s.schedules(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// schedules adds each schedule's last run and skips and each window's
// recent transitions to the scheduler's status.
func (s *Server) schedules(ctx context.Context) (SchedulesReply, error) {
	return WithHistory(ctx, s.opts.Store, Views(s.opts.Scheduler.Status(nextFires)))
}

// WithHistory adds to reply what the results database st holds of its
// schedules and windows: skips, the last run with its verdict, the recent
// window transitions. wtd schedules uses it when the daemon is down.
func WithHistory(ctx context.Context, st *store.Store, reply SchedulesReply) (SchedulesReply, error) {
	skips, err := st.CountScheduleEvents(ctx, store.KindSchedule, "skip")
	if err != nil {
		return reply, err
	}
	for i := range reply.Schedules {
		v := &reply.Schedules[i]
		v.Skips = skips[v.Name]
		fires, err := st.ScheduleEvents(ctx, store.EventQuery{Kind: store.KindSchedule, Name: v.Name, Events: []string{"fire"}, Limit: 1})
		if err != nil {
			return reply, err
		}
		if len(fires) > 0 && fires[0].RunID > 0 {
			if run, err := st.GetRun(ctx, fires[0].RunID); err == nil {
				v.LastRun = &RunRef{ID: run.ID, Status: run.Status, Trigger: run.Trigger, StartedAt: run.StartedAt}
			}
		}
	}
	var ids []int64
	for _, v := range reply.Schedules {
		if v.LastRun != nil {
			ids = append(ids, v.LastRun.ID)
		}
	}
	vs, err := verdicts(ctx, st, ids...)
	if err != nil {
		return reply, err
	}
	for _, v := range reply.Schedules {
		if v.LastRun != nil {
			v.LastRun.Verdict = vs[v.LastRun.ID]
		}
	}
	for i := range reply.Windows {
		v := &reply.Windows[i]
		evs, err := st.ScheduleEvents(ctx, store.EventQuery{Kind: store.KindWindow, Name: v.Name, Limit: 5})
		if err != nil {
			return reply, err
		}
		for _, ev := range evs {
			v.Recent = append(v.Recent, EventView{TS: ev.TS, Event: ev.Event, Detail: ev.Detail, Attrs: ev.Attrs})
		}
	}
	return reply, nil
}

// FireReply is the body of a fire's answer.
type FireReply struct {
	RunID    int64  `json:"run_id"`
	Schedule string `json:"schedule"`
	Trigger  string `json:"trigger"`
	URL      string `json:"url"`
}

func (s *Server) fireSchedule(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	id, err := s.opts.Scheduler.FireNow(r.Context(), name)
	var busy *schedule.BusyError
	var usage *runner.UsageError
	switch {
	case err == nil:
		s.opts.Log.Info("fired through the API", "schedule", name, "run", id, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusAccepted, FireReply{RunID: id, Schedule: name, Trigger: "api " + name, URL: runURL(id)})
	case errors.Is(err, schedule.ErrUnknown):
		writeError(w, http.StatusNotFound, err.Error())
	case errors.As(err, &busy):
		writeJSON(w, http.StatusConflict, apiError{Error: "schedule " + name + " not fired: " + busy.Holder, Holder: busy.Holder, RunID: busy.RunID})
	case errors.As(err, &usage):
		writeError(w, http.StatusBadRequest, "schedule "+name+": "+err.Error())
	case errors.Is(err, schedule.ErrStopped):
		writeError(w, http.StatusServiceUnavailable, err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "schedule "+name+": "+err.Error())
	}
}
