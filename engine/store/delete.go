package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// deleteRunsOp deletes runs with everything recorded about them.
type deleteRunsOp struct {
	ids []int64
}

func (o *deleteRunsOp) describe() string { return fmt.Sprintf("delete %d runs", len(o.ids)) }

func (o *deleteRunsOp) apply(ctx context.Context, w *writer) error {
	for _, id := range o.ids {
		// The cascade would do this too; explicit deletes keep the order
		// cheap (children first, each by its run_id index).
		for _, table := range []string{"samples", "events", "steps", "servers", "artifacts", "thresholds", "outbox"} {
			if _, err := w.exec(ctx, "DELETE FROM "+table+" WHERE run_id = ?", id); err != nil {
				return err
			}
		}
		if _, err := w.exec(ctx, "DELETE FROM runs WHERE id = ?", id); err != nil {
			return err
		}
		for k := range w.encoders {
			if k.runID == id {
				delete(w.encoders, k)
			}
		}
	}
	return nil
}

// DeleteRuns deletes runs with their steps, samples, events, servers and
// files. An unknown id is an error wrapping ErrNotFound, a run still going
// on one wrapping ErrRunning; then nothing is deleted.
func (s *Store) DeleteRuns(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("delete run %d: %w", id, err)
		}
		if r.Status == StatusRunning {
			return fmt.Errorf("delete run %d: %w (owner pid %d)", id, ErrRunning, r.OwnerPID)
		}
		if n, err := s.pendingChanges(ctx, id); err != nil {
			return fmt.Errorf("delete run %d: %w", id, err)
		} else if n > 0 {
			return fmt.Errorf("delete run %d: %w: %d changes to servers not put back yet (wtd restore %d)", id, ErrUnrestored, n, id)
		}
	}
	return s.do(ctx, &deleteRunsOp{ids: ids})
}

// PruneRuns deletes the finished runs that started before cutoff (runs
// still going on are kept) and returns their ids, oldest first.
func (s *Store) PruneRuns(ctx context.Context, cutoff time.Time) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+runColumns+" FROM runs WHERE started_at < ? ORDER BY id", cutoff.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("prune runs: %w", err)
	}
	var ids []int64
	for rows.Next() {
		r, err := s.scanRun(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("prune runs: %w", err)
		}
		if r.Status != StatusRunning {
			ids = append(ids, r.ID)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("prune runs: %w", err)
	}
	kept := ids[:0]
	for _, id := range ids {
		if n, err := s.pendingChanges(ctx, id); err != nil {
			return nil, fmt.Errorf("prune runs: %w", err)
		} else if n == 0 { // a run whose changes are not put back keeps its record of them
			kept = append(kept, id)
		}
	}
	ids = kept
	if len(ids) == 0 {
		return nil, nil
	}
	if err := s.do(ctx, &deleteRunsOp{ids: ids}); err != nil {
		return nil, fmt.Errorf("prune runs: %w", err)
	}
	return ids, nil
}

// ErrUnrestored reports a run whose changes to servers are not put back.
var ErrUnrestored = errors.New("run has changes not put back")

// pendingChanges counts the changes of run id not put back yet.
func (s *Store) pendingChanges(ctx context.Context, id int64) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM changes WHERE run_id = ? AND state = 'pending'", id).Scan(&n)
	return n, err
}
