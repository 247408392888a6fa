package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Threshold states.
const (
	ThresholdPassed     = "passed"
	ThresholdFailed     = "failed"
	ThresholdNoBaseline = "no baseline" // vs_baseline without an earlier ok run: not checked
)

// Threshold is how one threshold a playbook declared held at its run's
// end. Spec is the declaration as JSON (record.Threshold); nil pointers were not measured or
// do not apply.
type Threshold struct {
	Seq         int             `json:"seq"`
	Spec        json.RawMessage `json:"spec"`
	Unit        string          `json:"measure"`
	Value       *float64        `json:"value"`
	BaselineRun *int64          `json:"baseline_run"`
	Baseline    *float64        `json:"baseline"`
	Limit       *float64        `json:"limit"`
	State       string          `json:"state"`
	Reason      string          `json:"reason"`
}

type setThresholdsOp struct {
	runID int64
	ths   []Threshold
}

func (o *setThresholdsOp) describe() string {
	return fmt.Sprintf("record the thresholds of run %d", o.runID)
}

func (o *setThresholdsOp) apply(ctx context.Context, w *writer) error {
	if _, err := w.exec(ctx, `DELETE FROM thresholds WHERE run_id = ?`, o.runID); err != nil {
		return err
	}
	for _, t := range o.ths {
		if _, err := w.exec(ctx, `INSERT INTO thresholds (run_id, seq, spec, unit, value, baseline_run, baseline, lim, state, reason)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.runID, t.Seq, RedactURI(string(t.Spec)), t.Unit, t.Value, t.BaselineRun, t.Baseline, t.Limit, t.State, RedactURI(t.Reason)); err != nil {
			return err
		}
	}
	return nil
}

// SetThresholds records how the thresholds of a run held, replacing what
// was recorded before.
func (s *Store) SetThresholds(ctx context.Context, runID int64, ths []Threshold) error {
	return s.do(ctx, &setThresholdsOp{runID: runID, ths: ths})
}

// Thresholds returns the thresholds recorded with a run, in the order
// declared.
func (s *Store) Thresholds(ctx context.Context, runID int64) ([]Threshold, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, spec, unit, value, baseline_run, baseline, lim, state, reason
		FROM thresholds WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("read the thresholds of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []Threshold
	for rows.Next() {
		var t Threshold
		var value, base, lim sql.NullFloat64
		var baseRun sql.NullInt64
		var spec string
		if err := rows.Scan(&t.Seq, &spec, &t.Unit, &value, &baseRun, &base, &lim, &t.State, &t.Reason); err != nil {
			return nil, fmt.Errorf("read the thresholds of run %d: %w", runID, err)
		}
		t.Spec = json.RawMessage(spec)
		t.Value, t.Baseline, t.Limit = nullFloat(value), nullFloat(base), nullFloat(lim)
		if baseRun.Valid {
			t.BaselineRun = &baseRun.Int64
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the thresholds of run %d: %w", runID, err)
	}
	return out, nil
}

func nullFloat(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// LastRunThresholds returns, per schedule, how many thresholds of the last
// run it started that has ended were in each state (schedules whose last
// run declared none are absent).
func (s *Store) LastRunThresholds(ctx context.Context) (map[string]map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.name, t.state, count(*) FROM schedule_events e JOIN thresholds t ON t.run_id = e.run_id
		WHERE e.id IN (SELECT max(id) FROM schedule_events WHERE kind = 'schedule' AND event = 'end' AND run_id IS NOT NULL GROUP BY name)
		GROUP BY e.name, t.state`)
	if err != nil {
		return nil, fmt.Errorf("thresholds of the schedules' last runs: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]int64{}
	for rows.Next() {
		var name, state string
		var n int64
		if err := rows.Scan(&name, &state, &n); err != nil {
			return nil, fmt.Errorf("thresholds of the schedules' last runs: %w", err)
		}
		if out[name] == nil {
			out[name] = map[string]int64{}
		}
		out[name][state] = n
	}
	return out, rows.Err()
}
