package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Kinds of schedule events.
const (
	KindSchedule = "schedule"
	KindWindow   = "window"
	KindDaemon   = "daemon"
)

// ScheduleEvent is one entry of the daemon's history.
type ScheduleEvent struct {
	ID     int64
	TS     time.Time
	Kind   string // KindSchedule, KindWindow or KindDaemon
	Name   string // the schedule or window ("" for the daemon)
	Event  string // fire, skip, end; open, close, open-failed, close-failed; start, reload, stop
	RunID  int64  // 0 when the event concerns no run
	Detail string
	Attrs  map[string]any // read back with JSON types
}

type scheduleEventOp struct {
	ev    ScheduleEvent
	attrs any
	id    int64
}

func (o *scheduleEventOp) describe() string {
	return fmt.Sprintf("record %s %s %s", o.ev.Kind, o.ev.Name, o.ev.Event)
}

func (o *scheduleEventOp) apply(ctx context.Context, w *writer) error {
	var run any
	if o.ev.RunID > 0 {
		run = o.ev.RunID
	}
	row, err := w.queryRow(ctx, `INSERT INTO schedule_events (ts, kind, name, event, run_id, detail, attrs)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		o.ev.TS.UnixNano(), o.ev.Kind, o.ev.Name, o.ev.Event, run, RedactURI(o.ev.Detail), o.attrs)
	if err != nil {
		return err
	}
	return row.Scan(&o.id)
}

// AddScheduleEvent records ev (TS zero means now) and returns its id. URI
// passwords in the detail and attrs are masked.
func (s *Store) AddScheduleEvent(ctx context.Context, ev ScheduleEvent) (int64, error) {
	if ev.TS.IsZero() {
		ev.TS = time.Now()
	}
	js, err := marshalRedacted(ev.Attrs)
	if err != nil {
		return 0, fmt.Errorf("record %s %s %s: encode attrs: %w", ev.Kind, ev.Name, ev.Event, err)
	}
	o := &scheduleEventOp{ev: ev, attrs: js}
	if err := s.do(ctx, o); err != nil {
		return 0, err
	}
	return o.id, nil
}

// EventQuery selects schedule events; empty fields match all.
type EventQuery struct {
	Kind   string
	Name   string
	Events []string // any of these
	Since  time.Time
	Limit  int // <= 0: all
}

// ScheduleEvents returns the events q selects, newest first.
func (s *Store) ScheduleEvents(ctx context.Context, q EventQuery) ([]ScheduleEvent, error) {
	var w where
	w.eq("kind", q.Kind)
	w.eq("name", q.Name)
	if len(q.Events) > 0 {
		args := make([]any, len(q.Events))
		for i, e := range q.Events {
			args[i] = e
		}
		w.add("event IN (?"+strings.Repeat(", ?", len(q.Events)-1)+")", args...)
	}
	if !q.Since.IsZero() {
		w.add("ts >= ?", q.Since.UnixNano())
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1
	}
	query := "SELECT id, ts, kind, name, event, run_id, detail, attrs FROM schedule_events" + w.sql() + " ORDER BY ts DESC, id DESC LIMIT ?"
	args := append(w.args, limit)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list schedule events: %w", err)
	}
	defer rows.Close()
	var out []ScheduleEvent
	for rows.Next() {
		var ev ScheduleEvent
		var ts int64
		var run sql.NullInt64
		var attrs []byte
		if err := rows.Scan(&ev.ID, &ts, &ev.Kind, &ev.Name, &ev.Event, &run, &ev.Detail, &attrs); err != nil {
			return nil, fmt.Errorf("list schedule events: %w", err)
		}
		ev.TS, ev.RunID = time.Unix(0, ts), run.Int64
		if err := decodeJSON(attrs, &ev.Attrs); err != nil {
			return nil, fmt.Errorf("decode attrs of schedule event %d: %w", ev.ID, err)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list schedule events: %w", err)
	}
	return out, nil
}

// CountScheduleEvents returns how many events of kind and event each name
// has, e.g. the skips of every schedule.
func (s *Store) CountScheduleEvents(ctx context.Context, kind, event string) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, count(*) FROM schedule_events WHERE kind = ? AND event = ? GROUP BY name`, kind, event)
	if err != nil {
		return nil, fmt.Errorf("count %s %s events: %w", kind, event, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, fmt.Errorf("count %s %s events: %w", kind, event, err)
		}
		out[name] = n
	}
	return out, rows.Err()
}

// LastScheduleSuccess returns, per schedule, when a run it started last
// ended ok.
func (s *Store) LastScheduleSuccess(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, max(ts) FROM schedule_events
		WHERE kind = 'schedule' AND event = 'end' AND json_extract(attrs, '$.status') = 'ok' GROUP BY name`)
	if err != nil {
		return nil, fmt.Errorf("last successes of schedules: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var name string
		var ts int64
		if err := rows.Scan(&name, &ts); err != nil {
			return nil, fmt.Errorf("last successes of schedules: %w", err)
		}
		out[name] = time.Unix(0, ts)
	}
	return out, rows.Err()
}
