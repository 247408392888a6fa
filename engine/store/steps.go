package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// StepInfo is what is known when a step starts.
type StepInfo struct {
	RunID      int64
	Name       string
	Labels     map[string]any  // e.g. round, cacheSizeGB; read back with JSON types
	StartedAt  time.Time       // zero means now
	Settings   json.RawMessage // mongod settings in force
	Provenance json.RawMessage // cache-state provenance as known at the start
}

// StepResult is what is known when a step ends.
type StepResult struct {
	Status     string // ok, failed or aborted
	Error      string
	EndedAt    time.Time       // zero means now
	Results    json.RawMessage // per op type count, errors, ops/s, percentiles; server deltas
	Provenance json.RawMessage // replaces the provenance given at the start unless nil
}

// Step is a recorded step.
type Step struct {
	ID         int64
	RunID      int64
	Seq        int // 1, 2, ... in the order the run created them
	Name       string
	Labels     map[string]any
	StartedAt  time.Time
	EndedAt    time.Time // zero while running
	Status     string    // running, ok, failed or aborted
	Error      string
	Settings   json.RawMessage
	Provenance json.RawMessage
	Results    json.RawMessage
}

type createStepOp struct {
	info StepInfo
	id   int64
}

func (o *createStepOp) describe() string { return fmt.Sprintf("create step of run %d", o.info.RunID) }

func (o *createStepOp) apply(ctx context.Context, w *writer) error {
	in := o.info
	labels, err := marshalRedacted(in.Labels)
	if err != nil {
		return fmt.Errorf("encode labels: %w", err)
	}
	settings, err := redactJSON(in.Settings)
	if err != nil {
		return fmt.Errorf("check settings: %w", err)
	}
	prov, err := redactJSON(in.Provenance)
	if err != nil {
		return fmt.Errorf("check provenance: %w", err)
	}
	row, err := w.queryRow(ctx, `INSERT INTO steps (run_id, seq, name, labels, started_at, status, settings, provenance)
		SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, 'running', ?, ? FROM steps WHERE run_id = ?
		RETURNING id`, in.RunID, RedactURI(in.Name), labels, in.StartedAt.UnixNano(), settings, prov, in.RunID)
	if err != nil {
		return err
	}
	return row.Scan(&o.id)
}

// CreateStep records the start of a step (status running) and returns its id.
func (s *Store) CreateStep(ctx context.Context, info StepInfo) (int64, error) {
	if info.StartedAt.IsZero() {
		info.StartedAt = time.Now()
	}
	o := &createStepOp{info: info}
	if err := s.do(ctx, o); err != nil {
		return 0, err
	}
	return o.id, nil
}

type finishStepOp struct {
	id  int64
	res StepResult
}

func (o *finishStepOp) describe() string { return fmt.Sprintf("finish step %d", o.id) }

func (o *finishStepOp) apply(ctx context.Context, w *writer) error {
	results, err := redactJSON(o.res.Results)
	if err != nil {
		return fmt.Errorf("check results: %w", err)
	}
	prov, err := redactJSON(o.res.Provenance)
	if err != nil {
		return fmt.Errorf("check provenance: %w", err)
	}
	return w.execOne(ctx, `UPDATE steps SET status = ?, error = ?, ended_at = ?, results = ?,
		provenance = COALESCE(?, provenance) WHERE id = ?`,
		o.res.Status, RedactURI(o.res.Error), o.res.EndedAt.UnixNano(), results, prov, o.id)
}

// FinishStep records the end of a step.
func (s *Store) FinishStep(ctx context.Context, id int64, res StepResult) error {
	switch res.Status {
	case StatusOK, StatusFailed, StatusAborted:
	default:
		return fmt.Errorf("finish step %d: status %q is not ok, failed or aborted", id, res.Status)
	}
	if res.EndedAt.IsZero() {
		res.EndedAt = time.Now()
	}
	return s.do(ctx, &finishStepOp{id: id, res: res})
}

// Steps returns the steps of a run in order. When the run reads aborted
// because its wtd was killed, its running steps read aborted too, with the
// run's reason.
func (s *Store) Steps(ctx context.Context, runID int64) ([]Step, error) {
	run, err := s.GetRun(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("list steps: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, run_id, seq, name, labels, started_at, ended_at, status, error,
		settings, provenance, results FROM steps WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("list steps of run %d: %w", runID, err)
	}
	defer rows.Close()
	var steps []Step
	for rows.Next() {
		st, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("list steps of run %d: %w", runID, err)
		}
		if st.Status == StatusRunning && run.Status == StatusAborted {
			st.Status, st.Error = StatusAborted, run.Reason
		}
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list steps of run %d: %w", runID, err)
	}
	return steps, nil
}

func scanStep(rows *sql.Rows) (Step, error) {
	var st Step
	var labels, settings, prov, results []byte
	var started int64
	var ended sql.NullInt64
	if err := rows.Scan(&st.ID, &st.RunID, &st.Seq, &st.Name, &labels, &started, &ended, &st.Status,
		&st.Error, &settings, &prov, &results); err != nil {
		return Step{}, err
	}
	st.StartedAt = time.Unix(0, started)
	if ended.Valid {
		st.EndedAt = time.Unix(0, ended.Int64)
	}
	if err := decodeJSON(labels, &st.Labels); err != nil {
		return Step{}, fmt.Errorf("decode labels of step %d: %w", st.ID, err)
	}
	st.Settings, st.Provenance, st.Results = rawJSON(settings), rawJSON(prov), rawJSON(results)
	return st, nil
}
