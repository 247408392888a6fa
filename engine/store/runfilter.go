package store

import (
	"context"
	"fmt"
)

// RunFilter selects runs; empty fields match all.
type RunFilter struct {
	Playbook string // the playbook path as recorded
	Status   string // running, ok, failed or aborted, as seen from here
	Trigger  string // exact, e.g. "schedule nightly"
	Limit    int    // <= 0: all
}

// FindRuns returns the runs f selects, newest first. A run whose owner
// process is gone counts as aborted, as GetRun reads it.
func (s *Store) FindRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	var w where
	w.eq("playbook_path", f.Playbook)
	w.eq("triggered_by", f.Trigger)
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
	query := "SELECT " + runColumns + " FROM runs" + w.sql() + " ORDER BY id DESC"
	rows, err := s.r.QueryContext(ctx, query, w.args...)
	if err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("find runs: %w", err)
		}
		if f.Status != "" && r.Status != f.Status {
			continue
		}
		runs = append(runs, r)
		if f.Limit > 0 && len(runs) == f.Limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find runs: %w", err)
	}
	return runs, nil
}

// RunCounts returns how many runs have each status, as seen from here.
func (s *Store) RunCounts(ctx context.Context) (map[string]int64, error) {
	runs, err := s.FindRuns(ctx, RunFilter{Status: StatusRunning})
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT status, count(*) FROM runs WHERE status != 'running' GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[status] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	out[StatusRunning] += int64(len(runs))
	// Rows still marked running whose owner is gone read as aborted.
	var marked int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE status = 'running'`).Scan(&marked); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	out[StatusAborted] += marked - int64(len(runs))
	return out, nil
}
