package store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"time"
)

// RunFilter selects runs. Zero fields select everything.
type RunFilter struct {
	// Playbook matches a run's playbook path, its file name, or its file
	// name without ".lua" (cache_sweep matches playbooks/cache_sweep.lua).
	Playbook string
	// Status is running, ok, failed or aborted, as the run reads now (a run
	// whose process died reads aborted).
	Status string
	// Trigger matches what started the run exactly, e.g. "schedule nightly".
	Trigger string
	// Since keeps the runs that started at or after it.
	Since time.Time
	// Before keeps the runs whose id is lower (0: no bound).
	Before int64
	// Limit is the most runs returned, newest first (0: all).
	Limit int
}

// PlaybookMatches says whether a run's playbook path is the playbook name
// names: the same path, the same file name, or that file name without ".lua".
func PlaybookMatches(playbookPath, name string) bool {
	if name == "" || playbookPath == name {
		return true
	}
	if strings.HasSuffix(playbookPath, "/"+name) {
		return true
	}
	base := path.Base(playbookPath)
	return base == name || strings.TrimSuffix(base, ".lua") == strings.TrimSuffix(name, ".lua") && !strings.Contains(name, "/")
}

// FindRuns returns the runs f selects, newest first.
func (s *Store) FindRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	var w where
	w.eq("triggered_by", f.Trigger)
	if !f.Since.IsZero() {
		w.add("started_at >= ?", f.Since.UnixNano())
	}
	if f.Before > 0 {
		w.add("id < ?", f.Before)
	}
	switch f.Status {
	case "":
	case StatusAborted:
		// Decided per row: a running run whose owner died reads aborted.
		w.add("status IN (?, ?)", StatusRunning, StatusAborted)
	case StatusOK, StatusFailed, StatusRunning:
		w.eq("status", f.Status)
	default:
		return nil, fmt.Errorf("find runs: status %q is not running, ok, failed or aborted", f.Status)
	}
	rows, err := s.r.QueryContext(ctx, "SELECT "+runColumns+" FROM runs"+w.sql()+" ORDER BY id DESC", w.args...)
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("find runs: %w", err)
		}
		if !PlaybookMatches(r.PlaybookPath, f.Playbook) || f.Status != "" && r.Status != f.Status {
			continue
		}
		out = append(out, r)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	return out, nil
}

// LatestRun returns the newest run, of the named playbook when playbook is
// not empty; none gives an error wrapping ErrNotFound.
func (s *Store) LatestRun(ctx context.Context, playbook string) (Run, error) {
	runs, err := s.FindRuns(ctx, RunFilter{Playbook: playbook, Limit: 1})
	if err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		if playbook != "" {
			return Run{}, fmt.Errorf("no run of playbook %s: %w", playbook, ErrNotFound)
		}
		return Run{}, fmt.Errorf("no runs: %w", ErrNotFound)
	}
	return runs[0], nil
}

// PreviousOK returns the newest ok run before run that carried out the same
// playbook (same file name) with the same parameters: the baseline a
// repeated run is judged against. None gives an error wrapping ErrNotFound.
func (s *Store) PreviousOK(ctx context.Context, run Run) (Run, error) {
	cands, err := s.FindRuns(ctx, RunFilter{Playbook: path.Base(run.PlaybookPath), Status: StatusOK, Before: run.ID})
	if err != nil {
		return Run{}, err
	}
	if c, ok := PickBaseline(cands, run.PlaybookPath, run.Params, func(c Run) (string, map[string]any) { return c.PlaybookPath, c.Params }); ok {
		return c, nil
	}
	return Run{}, fmt.Errorf("no earlier ok run of %s with the same parameters as run %d: %w", path.Base(run.PlaybookPath), run.ID, ErrNotFound)
}

// PickBaseline is the baseline, among cands (earlier ok runs of a
// playbook's name, newest first; of gives a candidate's playbook path and
// parameters), of a run of playbook path with params: the newest with the
// same parameters, one of the same playbook file first, as two playbooks
// of one name in different directories must not be each other's baseline
// while either has runs.
func PickBaseline[T any](cands []T, path string, params map[string]any, of func(T) (string, map[string]any)) (T, bool) {
	for _, samePath := range []bool{true, false} {
		for _, c := range cands {
			if p, ps := of(c); (p == path) == samePath && SameParams(ps, params) {
				return c, true
			}
		}
	}
	var none T
	return none, false
}

// SameParams says whether two runs' parameters are equal (nil and empty
// are the same).
func SameParams(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// ErrRunning reports a run that is still going on where a finished one is
// needed.
var ErrRunning = errors.New("run is still running")
