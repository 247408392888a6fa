package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// RunEndAttr returns, for each of runs that a schedule ended, the attribute
// key recorded with its end event (the daemon's run-end hooks put there,
// e.g., the run's regression verdict under "verdict"), as JSON. Runs
// without an end event, or whose end lacks key, are absent.
func (s *Store) RunEndAttr(ctx context.Context, key string, runs ...int64) (map[int64]json.RawMessage, error) {
	out := map[int64]json.RawMessage{}
	const chunk = 500
	for len(runs) > 0 {
		part := runs[:min(chunk, len(runs))]
		runs = runs[len(part):]
		args := []any{"$." + key, KindSchedule}
		for _, id := range part {
			args = append(args, id)
		}
		rows, err := s.r.QueryContext(ctx, `SELECT run_id, attrs -> ? FROM schedule_events
			WHERE kind = ? AND event = 'end' AND run_id IN (?`+strings.Repeat(", ?", len(part)-1)+`) ORDER BY id`, args...)
		if err != nil {
			return nil, fmt.Errorf("read %s of run ends: %w", key, err)
		}
		for rows.Next() {
			var id int64
			var v []byte
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read %s of run ends: %w", key, err)
			}
			if v != nil && string(v) != "null" {
				out[id] = json.RawMessage(v)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s of run ends: %w", key, err)
		}
	}
	return out, nil
}

// Playbooks returns the playbook paths of the recorded runs, sorted.
func (s *Store) Playbooks(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT playbook_path FROM runs ORDER BY playbook_path`)
	if err != nil {
		return nil, fmt.Errorf("list playbooks: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("list playbooks: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
