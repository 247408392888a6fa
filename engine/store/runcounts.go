package store

import (
	"context"
	"fmt"
)

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
