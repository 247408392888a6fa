package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Sample is one interval's metrics of one source, decoded.
type Sample struct {
	TS      time.Time
	Metrics map[string]float64
}

// Point is one value of one metric.
type Point struct {
	TS    time.Time
	Value float64
}

// sampleOp encodes and inserts one sample.
type sampleOp struct {
	runID  int64
	source string
	ts     time.Time
	names  []string
	vals   []float64
}

func (o *sampleOp) describe() string {
	return fmt.Sprintf("add sample of %s to run %d", o.source, o.runID)
}

func (o *sampleOp) apply(ctx context.Context, w *writer) error {
	sid, err := w.sourceID(ctx, o.source)
	if err != nil {
		return err
	}
	w.pairs = w.pairs[:0]
	for i, name := range o.names {
		id, err := w.metricID(ctx, name)
		if err != nil {
			return err
		}
		w.pairs = append(w.pairs, idValue{id, o.vals[i]})
	}
	slices.SortFunc(w.pairs, func(a, b idValue) int { return cmp.Compare(a.id, b.id) })
	w.ids, w.vals = w.ids[:0], w.vals[:0]
	for _, p := range w.pairs {
		w.ids, w.vals = append(w.ids, p.id), append(w.vals, p.v)
	}

	key := encKey{o.runID, sid}
	se := w.encoders[key]
	if se == nil {
		se = &sourceEncoder{enc: newFrameEncoder(w.keyframeEvery, w.zip), lastTS: math.MinInt64}
		w.encoders[key] = se
	}
	w.touched = append(w.touched, key)
	ts := o.ts.UnixNano()
	if ts <= se.lastTS {
		ts = se.lastTS + 1 // a chain's order is its time order
	}
	frame, keyframe := se.enc.encode(w.ids, w.vals)
	if _, err := w.exec(ctx, `INSERT INTO samples (run_id, source_id, ts, keyframe, frame) VALUES (?, ?, ?, ?, ?)`,
		o.runID, sid, ts, keyframe, frame); err != nil {
		delete(w.encoders, key)
		return err
	}
	se.lastTS = ts
	return nil
}

// AddSample queues one sample of a source ("host", "server:m1", ...) without
// waiting; errors surface from Flush or Close. metrics is copied, so the
// caller may reuse it. Timestamps of a source must increase: one not after
// the previous sample's is moved to just after it.
func (s *Store) AddSample(runID int64, source string, ts time.Time, metrics map[string]float64) {
	o := &sampleOp{runID: runID, source: source, ts: ts,
		names: make([]string, 0, len(metrics)), vals: make([]float64, 0, len(metrics))}
	for name, v := range metrics {
		o.names, o.vals = append(o.names, name), append(o.vals, v)
	}
	s.enqueue(o)
}

// SampleSources returns the names of the sources that have samples in a run.
func (s *Store) SampleSources(ctx context.Context, runID int64) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name FROM sample_sources
		WHERE id IN (SELECT DISTINCT source_id FROM samples WHERE run_id = ?) ORDER BY name`, runID)
	if err != nil {
		return nil, fmt.Errorf("list sample sources of run %d: %w", runID, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list sample sources of run %d: %w", runID, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sample sources of run %d: %w", runID, err)
	}
	return names, nil
}

// SampleCount returns how many samples a run has, all sources together.
func (s *Store) SampleCount(ctx context.Context, runID int64) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM samples WHERE run_id = ?`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count samples of run %d: %w", runID, err)
	}
	return n, nil
}

// SourceSampleCount returns how many samples one source of a run has.
func (s *Store) SourceSampleCount(ctx context.Context, runID int64, source string) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM samples JOIN sample_sources src ON src.id = samples.source_id
		WHERE samples.run_id = ? AND src.name = ?`, runID, source).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count samples of run %d source %s: %w", runID, source, err)
	}
	return n, nil
}

// Samples returns the samples of one source of a run with from <= TS <= to,
// in time order; a zero from or to leaves that end open.
func (s *Store) Samples(ctx context.Context, runID int64, source string, from, to time.Time) ([]Sample, error) {
	type decoded struct {
		ts   time.Time
		ids  []int64
		vals []float64
	}
	var got []decoded
	err := s.scanSamples(ctx, runID, source, from, to, func(ts time.Time, d *frameDecoder) error {
		got = append(got, decoded{ts, slices.Clone(d.ids), slices.Clone(d.vals)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read samples of %s in run %d: %w", source, runID, err)
	}
	// Names are resolved after the rows are closed: a reader holds one
	// connection at a time, so concurrent readers cannot starve the pool.
	out := make([]Sample, len(got))
	for i, g := range got {
		m := make(map[string]float64, len(g.ids))
		for k, id := range g.ids {
			name, err := s.names.metric(ctx, s.r, id)
			if err != nil {
				return nil, fmt.Errorf("read samples of %s in run %d: %w", source, runID, err)
			}
			m[name] = g.vals[k]
		}
		out[i] = Sample{TS: g.ts, Metrics: m}
	}
	return out, nil
}

// Series returns one metric of one source over a whole run, in time order,
// skipping samples that lack it.
func (s *Store) Series(ctx context.Context, runID int64, source, metric string) ([]Point, error) {
	var id int64
	err := s.r.QueryRowContext(ctx, `SELECT id FROM metric_names WHERE name = ?`, metric).Scan(&id)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read series %s of %s in run %d: %w", metric, source, runID, err)
	}
	var out []Point
	err = s.scanSamples(ctx, runID, source, time.Time{}, time.Time{}, func(ts time.Time, d *frameDecoder) error {
		if v, ok := d.lookup(id); ok {
			out = append(out, Point{TS: ts, Value: v})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read series %s of %s in run %d: %w", metric, source, runID, err)
	}
	return out, nil
}

// scanSamples decodes the chain of one source from the last keyframe at or
// before from, calling fn for each sample in [from, to].
func (s *Store) scanSamples(ctx context.Context, runID int64, source string, from, to time.Time,
	fn func(time.Time, *frameDecoder) error) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = from.UnixNano()
	}
	if !to.IsZero() {
		hi = to.UnixNano()
	}
	var sid int64
	err := s.r.QueryRowContext(ctx, `SELECT id FROM sample_sources WHERE name = ?`, source).Scan(&sid)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	start := int64(math.MinInt64)
	err = s.r.QueryRowContext(ctx, `SELECT ts FROM samples WHERE run_id = ? AND source_id = ? AND ts <= ?
		AND keyframe = 1 ORDER BY ts DESC LIMIT 1`, runID, sid, lo).Scan(&start)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT ts, frame FROM samples WHERE run_id = ? AND source_id = ?
		AND ts >= ? AND ts <= ? ORDER BY ts`, runID, sid, start, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	var d frameDecoder
	var frame []byte
	for rows.Next() {
		var ts int64
		if err := rows.Scan(&ts, &frame); err != nil {
			return err
		}
		if err := d.decode(frame); err != nil {
			return fmt.Errorf("sample at %d: %w", ts, err)
		}
		if ts < lo {
			continue
		}
		if err := fn(time.Unix(0, ts), &d); err != nil {
			return err
		}
	}
	return rows.Err()
}

// nameCache maps metric ids to names for readers.
type nameCache struct {
	mu    sync.Mutex
	names map[int64]string
}

// metric returns the name of metric id, reloading the dictionary when the
// cache does not know the id.
func (c *nameCache) metric(ctx context.Context, db *sql.DB, id int64) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.names[id]; ok {
		return n, nil
	}
	names := map[int64]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, name FROM metric_names`)
	if err != nil {
		return "", fmt.Errorf("load metric names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k int64
		var n string
		if err := rows.Scan(&k, &n); err != nil {
			return "", fmt.Errorf("load metric names: %w", err)
		}
		names[k] = n
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("load metric names: %w", err)
	}
	c.names = names
	if n, ok := names[id]; ok {
		return n, nil
	}
	return "", fmt.Errorf("metric id %d: %w", id, ErrNotFound)
}
