package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"maps"
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
	runID   int64
	source  string
	ts      time.Time
	metrics map[string]float64
}

func (o *sampleOp) describe() string {
	return fmt.Sprintf("add sample of %s to run %d", o.source, o.runID)
}

func (o *sampleOp) apply(ctx context.Context, w *writer) error {
	key, se, err := w.chain(ctx, o.runID, o.source)
	if err != nil {
		return err
	}
	ids, vals, err := w.order(ctx, se, o.metrics)
	if err != nil {
		return err
	}
	ts := se.next(o.ts.UnixNano())
	frame, keyframe := se.enc.encode(ids, vals)
	if _, err := w.exec(ctx, `INSERT INTO samples (run_id, source_id, ts, keyframe, frame) VALUES (?, ?, ?, ?, ?)`,
		o.runID, key.sourceID, ts, keyframe, frame); err != nil {
		delete(w.encoders, key)
		return err
	}
	se.lastTS = ts
	if se.open.add(ts, ids, vals) {
		return w.seal(ctx, key, se)
	}
	return nil
}

// chain returns the encoder of a run's source, making it if needed, and
// notes that the transaction touches it.
func (w *writer) chain(ctx context.Context, runID int64, source string) (encKey, *sourceEncoder, error) {
	sid, err := w.sourceID(ctx, source)
	if err != nil {
		return encKey{}, nil, err
	}
	key := encKey{runID, sid}
	se := w.encoders[key]
	if se == nil {
		se = &sourceEncoder{enc: newFrameEncoder(w.keyframeEvery, w.zip), lastTS: math.MinInt64,
			open: blockBuilder{max: w.blockSamples}}
		w.encoders[key] = se
	}
	w.touched = append(w.touched, key)
	return key, se, nil
}

// next returns the time to store for a sample taken at ts: a chain's order
// is its time order, so one not after the previous is moved just after it.
func (se *sourceEncoder) next(ts int64) int64 {
	if ts <= se.lastTS {
		return se.lastTS + 1
	}
	return ts
}

// order returns the metrics of m as ids in increasing order and their
// values. A sample with the same names as the chain's previous one (the
// common case: serverStatus keeps its fields) takes the previous order
// without looking names up or sorting.
func (w *writer) order(ctx context.Context, se *sourceEncoder, m map[string]float64) ([]int64, []float64, error) {
	if len(se.names) == len(m) && len(m) > 0 {
		w.vals = w.vals[:0]
		same := true
		for _, n := range se.names {
			v, ok := m[n]
			if !ok {
				same = false
				break
			}
			w.vals = append(w.vals, v)
		}
		if same {
			return se.ids, w.vals, nil
		}
	}
	w.pairs = w.pairs[:0]
	for name, v := range m {
		id, err := w.metricID(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		w.pairs = append(w.pairs, idValue{id, v, name})
	}
	slices.SortFunc(w.pairs, func(a, b idValue) int { return cmp.Compare(a.id, b.id) })
	// New slices: the chain's open block may share the old ones.
	se.names, se.ids = make([]string, len(w.pairs)), make([]int64, len(w.pairs))
	w.vals = w.vals[:0]
	for i, p := range w.pairs {
		se.names[i], se.ids[i] = p.name, p.id
		w.vals = append(w.vals, p.v)
	}
	return se.ids, w.vals, nil
}

// seal replaces the rows of the chain's open samples by one block.
func (w *writer) seal(ctx context.Context, key encKey, se *sourceEncoder) error {
	n := se.open.len()
	if n < 2 {
		se.open.reset() // a lone sample keeps its frame
		return nil
	}
	first, last := se.open.ts[0], se.open.ts[n-1]
	frame := w.blocks.encodeBuilt(&se.open)
	if _, err := w.exec(ctx, `DELETE FROM samples WHERE run_id = ? AND source_id = ? AND ts >= ? AND ts <= ?`,
		key.runID, key.sourceID, first, last); err != nil {
		return fmt.Errorf("seal samples: %w", err)
	}
	if _, err := w.exec(ctx, `INSERT INTO samples (run_id, source_id, ts, keyframe, frame) VALUES (?, ?, ?, 1, ?)`,
		key.runID, key.sourceID, first, frame); err != nil {
		return fmt.Errorf("seal samples: %w", err)
	}
	se.open.reset()
	return nil
}

// sealRun seals the open samples of every chain of a run (or of every run
// when runID is 0).
func (w *writer) sealRun(ctx context.Context, runID int64) error {
	for key, se := range w.encoders {
		if runID != 0 && key.runID != runID || se.open.len() == 0 {
			continue
		}
		w.touched = append(w.touched, key)
		if err := w.seal(ctx, key, se); err != nil {
			return err
		}
	}
	return nil
}

// sealOp seals the open samples of every chain: at Close.
type sealOp struct{}

func (sealOp) describe() string { return "seal open samples" }

func (sealOp) apply(ctx context.Context, w *writer) error { return w.sealRun(ctx, 0) }

// AddSample queues one sample of a source ("host", "server:m1", ...) without
// waiting; errors surface from Flush or Close. metrics is copied, so the
// caller may reuse it. Timestamps of a source must increase: one not after
// the previous sample's is moved to just after it.
//
// A source's samples are first stored one row each, then, every few
// hundred, rewritten as one block (block.go); the last ones of a run when
// it finishes or the store closes.
func (s *Store) AddSample(runID int64, source string, ts time.Time, metrics map[string]float64) {
	s.enqueue(&sampleOp{runID: runID, source: source, ts: ts, metrics: maps.Clone(metrics)})
}

// Block is several samples of one source that have the same metrics, each
// in every sample: Values[m*len(TS)+s] is metric Names[m] in sample s.
// A name given twice keeps its last column.
type Block struct {
	Names  []string
	TS     []time.Time
	Values []float64
}

// AddBlock queues the samples of b as AddSample would, without waiting,
// and stores them as blocks at once. Values is copied; Names is kept, and
// must not change afterwards: a caller that gives the same Names slice
// again (as FTDC chunks of one schema do) saves the writer its lookups.
func (s *Store) AddBlock(runID int64, source string, b Block) {
	if len(b.TS) == 0 {
		return
	}
	o := &blockOp{runID: runID, source: source, names: b.Names, ts: make([]int64, len(b.TS)),
		values: append(valueBuffers.get(), b.Values...)}
	for i, t := range b.TS {
		o.ts[i] = t.UnixNano()
	}
	if len(o.values) != len(b.Names)*len(b.TS) {
		s.mu.Lock()
		s.noteFailure(fmt.Errorf("%s: %d values for %d metrics x %d samples", o.describe(), len(o.values), len(b.Names), len(b.TS)))
		s.mu.Unlock()
		return
	}
	s.enqueue(o)
}

// valueBuffers hold the values of queued blocks: an import queues a chunk
// of a few megabytes at a time, which would otherwise be garbage a chunk.
// (A sync.Pool would keep every buffer the writer gives back between two
// collections, since the importer takes them on another P.)
var valueBuffers bufferList

// bufferList keeps a couple of buffers for reuse.
type bufferList struct {
	mu   sync.Mutex
	free [][]float64
}

func (l *bufferList) get() []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		b := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		return b[:0]
	}
	return nil
}

func (l *bufferList) put(b []float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.free) < 2 {
		l.free = append(l.free, b)
	}
}

// blockOp encodes and inserts the blocks of AddBlock.
type blockOp struct {
	runID  int64
	source string
	names  []string
	ts     []int64
	values []float64
}

func (o *blockOp) describe() string {
	return fmt.Sprintf("add %d samples of %s to run %d", len(o.ts), o.source, o.runID)
}

func (o *blockOp) apply(ctx context.Context, w *writer) error {
	if err := o.write(ctx, w); err != nil {
		return err
	}
	// Once committed the values are not needed again (until then they
	// are: a failed batch is replayed one write at a time).
	w.onCommit = append(w.onCommit, func() {
		valueBuffers.put(o.values)
		o.values = nil
	})
	return nil
}

func (o *blockOp) write(ctx context.Context, w *writer) error {
	key, se, err := w.chain(ctx, o.runID, o.source)
	if err != nil {
		return err
	}
	if err := w.seal(ctx, key, se); err != nil { // the chain's rows stay in time order
		return err
	}
	ids, cols, err := w.columns(ctx, o.names)
	if err != nil {
		return err
	}
	n := len(o.ts)
	for i := range o.ts {
		o.ts[i] = se.next(o.ts[i])
		se.lastTS = o.ts[i]
	}
	per := max(1, min(w.blockSamples, blockValues/max(1, len(ids))))
	for from := 0; from < n; from += per {
		to := min(n, from+per)
		frame := w.blocks.encode(o.ts[from:to], ids, func(j int, col []float64, _ []bool) bool {
			c := cols[j] * n
			copy(col, o.values[c+from:c+to])
			return true
		})
		if _, err := w.exec(ctx, `INSERT INTO samples (run_id, source_id, ts, keyframe, frame) VALUES (?, ?, ?, 1, ?)`,
			key.runID, key.sourceID, o.ts[from], frame); err != nil {
			delete(w.encoders, key)
			return err
		}
	}
	last := make([]float64, len(ids))
	for j, c := range cols {
		last[j] = o.values[c*n+n-1]
	}
	se.enc.follow(ids, last)
	return nil
}

// columns returns the ids of names in increasing order and, for each, the
// index of its column (the last one of a name given twice). The answer for
// the last names slice seen is kept.
func (w *writer) columns(ctx context.Context, names []string) ([]int64, []int, error) {
	if c := w.lastColumns; c != nil && len(c.names) == len(names) && (len(names) == 0 || &c.names[0] == &names[0]) {
		return c.ids, c.cols, nil
	}
	w.pairs = w.pairs[:0]
	for i, name := range names {
		id, err := w.metricID(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		w.pairs = append(w.pairs, idValue{id: id, v: float64(i)})
	}
	slices.SortStableFunc(w.pairs, func(a, b idValue) int { return cmp.Compare(a.id, b.id) })
	c := &columnOrder{names: names}
	for _, p := range w.pairs {
		if k := len(c.ids); k > 0 && c.ids[k-1] == p.id {
			c.cols[k-1] = int(p.v)
			continue
		}
		c.ids, c.cols = append(c.ids, p.id), append(c.cols, int(p.v))
	}
	w.lastColumns = c
	return c.ids, c.cols, nil
}

// columnOrder is the answer of columns for one names slice.
type columnOrder struct {
	names []string
	ids   []int64
	cols  []int
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
	n, err := s.countSamples(ctx, `FROM samples WHERE run_id = ?`, runID)
	if err != nil {
		return 0, fmt.Errorf("count samples of run %d: %w", runID, err)
	}
	return n, nil
}

// SourceSampleCount returns how many samples one source of a run has.
func (s *Store) SourceSampleCount(ctx context.Context, runID int64, source string) (int64, error) {
	n, err := s.countSamples(ctx, `FROM samples JOIN sample_sources src ON src.id = samples.source_id
		WHERE samples.run_id = ? AND src.name = ?`, runID, source)
	if err != nil {
		return 0, fmt.Errorf("count samples of run %d source %s: %w", runID, source, err)
	}
	return n, nil
}

// isBlockSQL is true of a samples row that holds a block: its frame's
// first byte has flagBlock (with or without flagZstd).
var isBlockSQL = fmt.Sprintf(`hex(substr(frame, 1, 1)) IN ('%02X', '%02X')`, flagBlock, flagBlock|flagZstd)

// countSamples counts the samples of the rows fromWhere selects: one a
// row, but for blocks, whose count follows their flags (block.go).
func (s *Store) countSamples(ctx context.Context, fromWhere string, args ...any) (int64, error) {
	// One snapshot for both queries, as in scanSamples.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() // read only: nothing to keep
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) `+fromWhere+` AND NOT `+isBlockSQL, args...).Scan(&n); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT substr(frame, 2, 10) `+fromWhere+` AND `+isBlockSQL, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var head []byte
	for rows.Next() {
		if err := rows.Scan(&head); err != nil {
			return 0, err
		}
		k, w := binary.Uvarint(head)
		if w <= 0 || k > math.MaxInt32 {
			return 0, fmt.Errorf("%w: block without a sample count", errCorrupt)
		}
		n += int64(k)
	}
	return n, rows.Err()
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
	// One snapshot for both queries: the writer may replace the rows of
	// open samples by a block in between.
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() // read only: nothing to keep
	start := int64(math.MinInt64)
	err = tx.QueryRowContext(ctx, `SELECT ts FROM samples WHERE run_id = ? AND source_id = ? AND ts <= ?
		AND keyframe = 1 ORDER BY ts DESC LIMIT 1`, runID, sid, lo).Scan(&start)
	if err != nil && err != sql.ErrNoRows {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT ts, frame FROM samples WHERE run_id = ? AND source_id = ?
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
		if !d.block {
			if ts < lo {
				continue
			}
			if err := fn(time.Unix(0, ts), &d); err != nil {
				return err
			}
			continue
		}
		for i, off := range d.blk.ts {
			t := ts + off
			if t < lo || t > hi {
				continue
			}
			d.blockSample(i)
			if err := fn(time.Unix(0, t), &d); err != nil {
				return err
			}
		}
		d.blockSample(d.blk.n - 1) // a delta frame after the block follows its last sample
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
