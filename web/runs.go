package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
)

// defaultRunLimit is how many runs GET /api/v1/runs lists without limit=.
const defaultRunLimit = 50

// verdicts reads the recorded verdicts of runs.
func verdicts(ctx context.Context, st *store.Store, runs ...int64) (map[int64]*compare.RunVerdict, error) {
	raw, err := record.Verdicts(ctx, st, runs...)
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
	out, err := record.Runs(r.Context(), s.opts.Store, runs)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
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
	rec, err := record.Load(r.Context(), s.opts.Store, run.ID)
	if errors.Is(err, store.ErrNotFound) { // deleted since
		writeError(w, http.StatusNotFound, fmt.Sprintf("no run %d", run.ID))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rec.View())
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
