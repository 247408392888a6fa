package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"wtd/engine/compare"
	"wtd/engine/store"
)

// defaultRunLimit is how many runs GET /api/v1/runs lists without limit=.
const defaultRunLimit = 50

// RunView is a run in the API.
type RunView struct {
	ID           int64           `json:"id"`
	Playbook     string          `json:"playbook"`
	SHA256       string          `json:"playbook_sha256"`
	Params       map[string]any  `json:"params"`
	Status       string          `json:"status"`
	Reason       string          `json:"reason,omitempty"`
	Trigger      string          `json:"trigger"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      *time.Time      `json:"ended_at,omitempty"`
	DurationSecs float64         `json:"duration_s"`
	Host         store.HostFacts `json:"host"`
	Target       string          `json:"target,omitempty"`
	TargetURI    string          `json:"target_uri,omitempty"`
	TargetVer    string          `json:"target_version,omitempty"`
	WtdVersion   string          `json:"wtd_version"`
	OwnerPID     int             `json:"owner_pid"`
	// Verdict is the run's regression verdict against its baseline,
	// recorded when a run the daemon started ended ok (null otherwise).
	Verdict *compare.RunVerdict `json:"verdict"`
}

// VerdictAttr is the key of a run's regression verdict (a
// compare.RunVerdict) in the attributes of its end event in the daemon's
// history (schedule_events, event "end").
const VerdictAttr = "verdict"

// verdicts reads the recorded verdicts of runs.
func verdicts(ctx context.Context, st *store.Store, runs ...int64) (map[int64]*compare.RunVerdict, error) {
	raw, err := st.RunEndAttr(ctx, VerdictAttr, runs...)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*compare.RunVerdict, len(raw))
	for id, js := range raw {
		var v compare.RunVerdict
		if err := json.Unmarshal(js, &v); err != nil {
			return nil, fmt.Errorf("decode the verdict of run %d: %w", id, err)
		}
		out[id] = &v
	}
	return out, nil
}

func runView(r store.Run) RunView {
	v := RunView{ID: r.ID, Playbook: r.PlaybookPath, SHA256: r.PlaybookSHA256, Params: r.Params, Status: r.Status,
		Reason: r.Reason, Trigger: r.Trigger, StartedAt: r.StartedAt, Host: r.Host, Target: r.TargetPath,
		TargetURI: r.TargetURI, TargetVer: r.TargetVersion, WtdVersion: r.WtdVersion, OwnerPID: r.OwnerPID}
	end := time.Now()
	if !r.EndedAt.IsZero() {
		e := r.EndedAt
		v.EndedAt, end = &e, e
	}
	v.DurationSecs = end.Sub(r.StartedAt).Seconds()
	return v
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.RunFilter{Playbook: q.Get("playbook"), Status: q.Get("status"), Trigger: q.Get("trigger"), Limit: defaultRunLimit}
	switch f.Status {
	case "", store.StatusRunning, store.StatusOK, store.StatusFailed, store.StatusAborted:
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("status %q: want running, ok, failed or aborted", f.Status))
		return
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 10000 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want a number from 1 to 10000", l))
			return
		}
		f.Limit = n
	}
	runs, err := s.opts.Store.FindRuns(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	ids := make([]int64, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	vs, err := verdicts(r.Context(), s.opts.Store, ids...)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]RunView, 0, len(runs))
	for _, run := range runs {
		v := runView(run)
		v.Verdict = vs[run.ID]
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// StepView is a step in GET /api/v1/runs/{id}.
type StepView struct {
	Seq        int             `json:"seq"`
	Name       string          `json:"name"`
	Labels     map[string]any  `json:"labels,omitempty"`
	Status     string          `json:"status"`
	Error      string          `json:"error,omitempty"`
	StartedAt  time.Time       `json:"started_at"`
	EndedAt    *time.Time      `json:"ended_at,omitempty"`
	Settings   json.RawMessage `json:"settings,omitempty"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	Results    json.RawMessage `json:"results,omitempty"`
}

// RunDetail is the body of GET /api/v1/runs/{id}.
type RunDetail struct {
	Run     RunView      `json:"run"`
	Steps   []StepView   `json:"steps"`
	Servers []ServerView `json:"servers"`
	Events  []EventLine  `json:"events"`
}

// ServerView is a server a run used.
type ServerView struct {
	Name       string `json:"name"`
	Started    bool   `json:"started"`
	URI        string `json:"uri"`
	Binary     string `json:"binary,omitempty"`
	Version    string `json:"version"`
	GitVersion string `json:"git_version,omitempty"`
	PID        int    `json:"pid,omitempty"`
}

// EventLine is a line of a run's log.
type EventLine struct {
	TS      time.Time `json:"ts"`
	Level   string    `json:"level"`
	Source  string    `json:"source"`
	Message string    `json:"message"`
}

// runFromPath reads {id} and the run; it has answered when ok is false.
func (s *Server) runFromPath(w http.ResponseWriter, r *http.Request) (store.Run, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("run id %q: want a positive number", r.PathValue("id")))
		return store.Run{}, false
	}
	run, err := s.opts.Store.GetRun(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %d", id))
		return store.Run{}, false
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return store.Run{}, false
	}
	return run, true
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runFromPath(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	st := s.opts.Store
	steps, err := st.Steps(ctx, run.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	servers, err := st.Servers(ctx, run.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	events, err := st.Events(ctx, run.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	vs, err := verdicts(ctx, st, run.ID)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	d := RunDetail{Run: runView(run), Steps: []StepView{}, Servers: []ServerView{}, Events: []EventLine{}}
	d.Run.Verdict = vs[run.ID]
	for _, sv := range servers {
		d.Servers = append(d.Servers, ServerView{Name: sv.Name, Started: sv.Started, URI: sv.URI, Binary: sv.Binary,
			Version: sv.Version, GitVersion: sv.GitVersion, PID: sv.PID})
	}
	for _, st := range steps {
		v := StepView{Seq: st.Seq, Name: st.Name, Labels: st.Labels, Status: st.Status, Error: st.Error, StartedAt: st.StartedAt,
			Settings: st.Settings, Provenance: st.Provenance, Results: st.Results}
		if !st.EndedAt.IsZero() {
			e := st.EndedAt
			v.EndedAt = &e
		}
		d.Steps = append(d.Steps, v)
	}
	for _, ev := range events {
		d.Events = append(d.Events, EventLine{TS: ev.TS, Level: ev.Level, Source: ev.Source, Message: ev.Message})
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) abortRun(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runFromPath(w, r)
	if !ok {
		return
	}
	switch {
	case run.Status != store.StatusRunning:
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d is not running: it ended %s", run.ID, run.Status))
	case s.opts.Scheduler.Abort(run.ID, errors.New("aborted through the API")):
		s.opts.Log.Info("abort through the API", "run", run.ID, "remote", r.RemoteAddr)
		writeJSON(w, http.StatusAccepted, map[string]any{"run_id": run.ID, "aborting": true, "url": runURL(run.ID)})
	case run.OwnerPID != os.Getpid():
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d is carried out by another process (pid %d), not by this daemon: stop it there (Ctrl-C or SIGTERM)", run.ID, run.OwnerPID))
	default:
		writeError(w, http.StatusConflict, fmt.Sprintf("run %d is ending", run.ID))
	}
}

func runURL(id int64) string { return fmt.Sprintf("/api/v1/runs/%d", id) }
