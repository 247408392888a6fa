package store

import (
	"context"
	"fmt"
)

// RunCounts returns how many runs have each status, as seen from here: a
// row marked running whose owner is gone counts as aborted.
func (s *Store) RunCounts(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	rows, err := s.r.QueryContext(ctx, `SELECT status, count(*) FROM runs WHERE status != 'running' GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[status] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	running, err := s.r.QueryContext(ctx, "SELECT "+runColumns+" FROM runs WHERE status = 'running'")
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer running.Close()
	for running.Next() {
		r, err := s.scanRun(running)
		if err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[r.Status]++
	}
	if err := running.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	return out, nil
}
