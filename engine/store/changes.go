package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Change states.
const (
	ChangePending  = "pending"  // made, not put back yet
	ChangeRestored = "restored" // put back
	ChangeKept     = "kept"     // the playbook asked to keep it (keep = true)
	// ChangeIrreversible is a change wtd cannot put back: a command the
	// operator allowed m:command to run (allow_commands).
	ChangeIrreversible = "irreversible"
)

// Change kinds.
const (
	ChangeConfig    = "config"    // a service's config file, edited before a restart
	ChangeParameter = "parameter" // a runtime setParameter
	ChangeIndex     = "index"     // an index m:create_index made, dropped at the end
	ChangeCommand   = "command"   // a command m:command ran that changes the server
)

// Change is something a run changed on a server it must leave as it found
// it, recorded before the change is made. The engine gives the JSON
// columns their meaning.
type Change struct {
	ID     int64
	RunID  int64
	Server string
	Kind   string
	// Target is the config file, the parameter's name, the index's
	// namespace (db.collection) or the command's name.
	Target string
	// Before is the parameter's value before the change (JSON).
	Before string
	// Original is the config file's content before the run's first change.
	Original []byte
	// Change is what was set (JSON).
	Change string
	// Restore is how to put it back (JSON): URI, unit, service manager...
	Restore    string
	Keep       bool
	State      string
	MadeAt     time.Time
	RestoredAt time.Time // zero while pending
	Detail     string
}

type addChangeOp struct {
	c  Change
	id int64
}

func (o *addChangeOp) describe() string { return fmt.Sprintf("record a change of run %d", o.c.RunID) }

func (o *addChangeOp) apply(ctx context.Context, w *writer) error {
	c := o.c
	row, err := w.queryRow(ctx, `INSERT INTO changes (run_id, server, kind, target, before, original, change, restore,
		keep, state, made_at, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.RunID, c.Server, c.Kind, RedactURI(c.Target), nullString(RedactURI(c.Before)), c.Original,
		nullString(RedactURI(c.Change)), nullString(RedactURI(c.Restore)), c.Keep, c.State, c.MadeAt.UnixNano(), RedactURI(c.Detail))
	if err != nil {
		return err
	}
	return row.Scan(&o.id)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// AddChange records a change before it is made and returns its id; it
// returns once the record is committed. URI passwords in its text are
// masked (Original, a config file's bytes, is kept exactly).
func (s *Store) AddChange(ctx context.Context, c Change) (int64, error) {
	if c.MadeAt.IsZero() {
		c.MadeAt = time.Now()
	}
	if c.State == "" {
		c.State = ChangePending
		if c.Keep {
			c.State = ChangeKept
		}
	}
	o := &addChangeOp{c: c}
	if err := s.do(ctx, o); err != nil {
		return 0, err
	}
	return o.id, nil
}

type setChangeStateOp struct {
	ids    []int64
	state  string
	detail string
	at     time.Time
}

func (o *setChangeStateOp) describe() string { return "record the restore of a change" }

func (o *setChangeStateOp) apply(ctx context.Context, w *writer) error {
	for _, id := range o.ids {
		var at any
		if o.state == ChangeRestored {
			at = o.at.UnixNano()
		}
		if _, err := w.exec(ctx, `UPDATE changes SET state = ?, detail = ?, restored_at = ? WHERE id = ?`,
			o.state, RedactURI(o.detail), at, id); err != nil {
			return err
		}
	}
	return nil
}

// SetChangeState records how the restore of changes ids went: restored
// (with the time), kept, still pending with why in detail, or for a change
// that cannot be put back what became of it. It returns once committed.
func (s *Store) SetChangeState(ctx context.Context, ids []int64, state, detail string) error {
	return s.do(ctx, &setChangeStateOp{ids: ids, state: state, detail: detail, at: time.Now()})
}

const changeColumns = `id, run_id, server, kind, target, before, original, change, restore, keep, state,
	made_at, restored_at, detail`

func scanChanges(rows *sql.Rows) ([]Change, error) {
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var before, change, restore sql.NullString
		var made int64
		var restored sql.NullInt64
		if err := rows.Scan(&c.ID, &c.RunID, &c.Server, &c.Kind, &c.Target, &before, &c.Original, &change, &restore,
			&c.Keep, &c.State, &made, &restored, &c.Detail); err != nil {
			return nil, err
		}
		c.Before, c.Change, c.Restore = before.String, change.String, restore.String
		c.MadeAt = time.Unix(0, made)
		if restored.Valid {
			c.RestoredAt = time.Unix(0, restored.Int64)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Changes returns the changes of a run in the order they were made.
func (s *Store) Changes(ctx context.Context, runID int64) ([]Change, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+changeColumns+" FROM changes WHERE run_id = ? ORDER BY id", runID)
	if err != nil {
		return nil, fmt.Errorf("list changes of run %d: %w", runID, err)
	}
	out, err := scanChanges(rows)
	if err != nil {
		return nil, fmt.Errorf("list changes of run %d: %w", runID, err)
	}
	return out, nil
}

// UnrestoredRuns returns the runs with pending changes whose owner has
// ended (their status as seen from here is not running): the runs whose
// wtd was killed before it put things back.
func (s *Store) UnrestoredRuns(ctx context.Context) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT DISTINCT run_id FROM changes WHERE state = 'pending' ORDER BY run_id")
	if err != nil {
		return nil, fmt.Errorf("list unrestored runs: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list unrestored runs: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list unrestored runs: %w", err)
	}
	var out []int64
	for _, id := range ids {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		if r.Status != StatusRunning {
			out = append(out, id)
		}
	}
	return out, nil
}
