package store

import (
	"context"
	"fmt"
	"time"
)

// Event is one log line of a run.
type Event struct {
	ID      int64
	RunID   int64
	TS      time.Time
	Level   string // "debug", "info", "warn", "error"
	Source  string // who said it: "engine", "mongod:m1", "playbook", ...
	Message string
	Attrs   map[string]any // read back with JSON types
}

// eventOp inserts an event whose attrs are already JSON text (or nil).
type eventOp struct {
	ev    Event
	attrs any
}

func (o *eventOp) describe() string { return fmt.Sprintf("add event to run %d", o.ev.RunID) }

func (o *eventOp) apply(ctx context.Context, w *writer) error {
	_, err := w.exec(ctx, `INSERT INTO events (run_id, ts, level, source, message, attrs) VALUES (?, ?, ?, ?, ?, ?)`,
		o.ev.RunID, o.ev.TS.UnixNano(), o.ev.Level, o.ev.Source, RedactURI(o.ev.Message), o.attrs)
	return err
}

// AddEvent queues a log line of a run without waiting; errors surface from
// Flush or Close. URI passwords in the message and attrs are masked. attrs
// is encoded before AddEvent returns, so the caller may reuse it.
func (s *Store) AddEvent(runID int64, ts time.Time, level, source, msg string, attrs map[string]any) {
	js, err := marshalRedacted(attrs)
	if err != nil {
		s.mu.Lock()
		s.noteFailure(fmt.Errorf("add event to run %d: encode attrs: %w", runID, err))
		s.mu.Unlock()
		return
	}
	s.enqueue(&eventOp{ev: Event{RunID: runID, TS: ts, Level: level, Source: source, Message: msg}, attrs: js})
}

// Events returns the events of a run in time order.
func (s *Store) Events(ctx context.Context, runID int64) ([]Event, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, run_id, ts, level, source, message, attrs
		FROM events WHERE run_id = ? ORDER BY ts, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("list events of run %d: %w", runID, err)
	}
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var ev Event
		var ts int64
		var attrs []byte
		if err := rows.Scan(&ev.ID, &ev.RunID, &ts, &ev.Level, &ev.Source, &ev.Message, &attrs); err != nil {
			return nil, fmt.Errorf("list events of run %d: %w", runID, err)
		}
		ev.TS = time.Unix(0, ts)
		if err := decodeJSON(attrs, &ev.Attrs); err != nil {
			return nil, fmt.Errorf("decode attrs of event %d: %w", ev.ID, err)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events of run %d: %w", runID, err)
	}
	return events, nil
}
