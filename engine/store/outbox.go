package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// HostID is this results database's host id: twelve hex digits made at
// random once, when the database was made or first opened by a wtd that
// knows it. With a run's id it names the run in a central results store
// (HOSTID:RUN), so that the runs of many hosts never collide there.
func (s *Store) HostID(ctx context.Context) (string, error) {
	var id string
	if err := s.r.QueryRowContext(ctx, `SELECT id FROM host_identity LIMIT 1`).Scan(&id); err != nil {
		return "", fmt.Errorf("read host id: %w", err)
	}
	return id, nil
}

// Push is a run's entry in the outbox: queued to be pushed to the central
// results store, and pushed once the store acknowledged it.
type Push struct {
	RunID     int64
	QueuedAt  time.Time
	Attempts  int       // failed attempts since it was queued
	NextAt    time.Time // when the next attempt is due
	LastError string    // the last attempt's error ("" none)
	PushedAt  time.Time // zero while it waits
	Dest      string    // the store it was pushed to (URI without password, database)
}

// Waiting is true while the push is not acknowledged.
func (p Push) Waiting() bool { return p.PushedAt.IsZero() }

type queuePushOp struct {
	ids []int64
	at  time.Time
}

func (o *queuePushOp) describe() string { return fmt.Sprintf("queue %d runs to push", len(o.ids)) }

func (o *queuePushOp) apply(ctx context.Context, w *writer) error {
	for _, id := range o.ids {
		if _, err := w.exec(ctx, `INSERT INTO outbox (run_id, queued_at, next_at) VALUES (?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET queued_at = excluded.queued_at, next_at = excluded.next_at,
				attempts = 0, last_error = '', pushed_at = NULL`, id, o.at.UnixNano(), o.at.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// QueuePush puts runs in the outbox, due now: queued again, a run already
// pushed waits to be pushed again.
func (s *Store) QueuePush(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.do(ctx, &queuePushOp{ids: ids, at: time.Now()})
}

type pushResultOp struct {
	id      int64
	at      time.Time
	dest    string
	err     string
	next    time.Time
	success bool
}

func (o *pushResultOp) describe() string { return fmt.Sprintf("record the push of run %d", o.id) }

func (o *pushResultOp) apply(ctx context.Context, w *writer) error {
	if o.success {
		_, err := w.exec(ctx, `UPDATE outbox SET pushed_at = ?, last_error = '', dest = ? WHERE run_id = ?`,
			o.at.UnixNano(), RedactURI(o.dest), o.id)
		return err
	}
	_, err := w.exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_at = ? WHERE run_id = ?`,
		RedactURI(o.err), o.next.UnixNano(), o.id)
	return err
}

// PushDone records that the results store dest acknowledged run id.
func (s *Store) PushDone(ctx context.Context, id int64, dest string, at time.Time) error {
	return s.do(ctx, &pushResultOp{id: id, at: at, dest: dest, success: true})
}

// PushFailed records a failed attempt to push run id, and when the next
// one is due.
func (s *Store) PushFailed(ctx context.Context, id int64, reason string, next time.Time) error {
	return s.do(ctx, &pushResultOp{id: id, err: reason, next: next})
}

const pushColumns = `run_id, queued_at, attempts, next_at, last_error, pushed_at, dest`

func scanPushes(rows *sql.Rows) ([]Push, error) {
	defer rows.Close()
	var out []Push
	for rows.Next() {
		var p Push
		var queued, next int64
		var pushed sql.NullInt64
		if err := rows.Scan(&p.RunID, &queued, &p.Attempts, &next, &p.LastError, &pushed, &p.Dest); err != nil {
			return nil, err
		}
		p.QueuedAt, p.NextAt = time.Unix(0, queued), time.Unix(0, next)
		if pushed.Valid {
			p.PushedAt = time.Unix(0, pushed.Int64)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PushesDue returns the waiting pushes of ended runs whose next attempt is
// due at now, oldest first.
func (s *Store) PushesDue(ctx context.Context, now time.Time) ([]Push, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+pushColumns+` FROM outbox
		WHERE pushed_at IS NULL AND next_at <= ? AND run_id IN (SELECT id FROM runs WHERE ended_at IS NOT NULL)
		ORDER BY run_id`, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	out, err := scanPushes(rows)
	if err != nil {
		return nil, fmt.Errorf("read the outbox: %w", err)
	}
	return out, nil
}

// Pushes returns the outbox entries of runs ids (all entries when none is
// given), by run id; a run never queued is absent.
func (s *Store) Pushes(ctx context.Context, ids ...int64) (map[int64]Push, error) {
	out := map[int64]Push{}
	read := func(q string, args ...any) error {
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("read the outbox: %w", err)
		}
		list, err := scanPushes(rows)
		if err != nil {
			return fmt.Errorf("read the outbox: %w", err)
		}
		for _, p := range list {
			out[p.RunID] = p
		}
		return nil
	}
	if len(ids) == 0 {
		return out, read(`SELECT ` + pushColumns + ` FROM outbox`)
	}
	const chunk = 500 // as RunEndAttr: well below SQLite's bound on parameters
	for len(ids) > 0 {
		part := ids[:min(chunk, len(ids))]
		ids = ids[len(part):]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		if err := read(`SELECT `+pushColumns+` FROM outbox WHERE run_id IN (?`+strings.Repeat(`, ?`, len(part)-1)+`)`, args...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NextPushAt returns when the earliest waiting push is due; ok is false
// when none waits.
func (s *Store) NextPushAt(ctx context.Context) (at time.Time, ok bool, err error) {
	var next sql.NullInt64
	if err := s.r.QueryRowContext(ctx, `SELECT min(next_at) FROM outbox WHERE pushed_at IS NULL`).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("read the outbox: %w", err)
	}
	if !next.Valid {
		return time.Time{}, false, nil
	}
	return time.Unix(0, next.Int64), true, nil
}
