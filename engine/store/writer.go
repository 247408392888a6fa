package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// op is one queued write, applied by the writer inside a transaction.
type op interface {
	apply(ctx context.Context, w *writer) error
	describe() string // names the write in errors: "add sample", "create run"
}

// flushOp writes nothing; waiting for it waits for everything queued before.
type flushOp struct{}

func (flushOp) apply(context.Context, *writer) error { return nil }
func (flushOp) describe() string                     { return "flush store" }

// encKey names one delta chain of samples.
type encKey struct {
	runID, sourceID int64
}

// sourceEncoder is the state of one chain.
type sourceEncoder struct {
	enc    *frameEncoder
	lastTS int64
	open   blockBuilder // the samples stored one row each since the last block

	// The names of the last sample in id order, and their ids.
	names []string
	ids   []int64
}

// writer is the state owned by the writer goroutine: the single connection,
// the dictionaries as far as it knows them, and the encoder of every chain.
type writer struct {
	conn          *sql.Conn // the writer connection, held for the writer's life
	keyframeEvery int
	blockSamples  int
	zip           *deflater
	stmts         map[string]*sql.Stmt

	metricIDs   map[string]int64
	namesLoaded bool
	sourceIDs   map[string]int64
	encoders    map[encKey]*sourceEncoder

	// What the current transaction changed in the state above, to undo on
	// rollback and to finish on commit.
	tx         *sql.Tx
	newMetrics []string
	newSources []string
	touched    []encKey
	finished   []int64  // runs whose chains end on commit
	onCommit   []func() // run after the commit

	pairs       []idValue // scratch for a sample
	vals        []float64
	blocks      blockEncoder
	lastColumns *columnOrder // of the last AddBlock
}

type idValue struct {
	id   int64
	v    float64
	name string
}

func newWriter(conn *sql.Conn, keyframeEvery, blockSamples int) *writer {
	return &writer{
		conn:          conn,
		keyframeEvery: keyframeEvery,
		blockSamples:  blockSamples,
		zip:           newDeflater(),
		stmts:         map[string]*sql.Stmt{},
		metricIDs:     map[string]int64{},
		sourceIDs:     map[string]int64{},
		encoders:      map[encKey]*sourceEncoder{},
	}
}

// commit applies a batch in one transaction and returns each write's error.
// When one write fails, the batch is rolled back and replayed one write per
// transaction, so a bad write cannot take its neighbours with it. When the
// transaction itself fails (begin or commit), every write gets that error.
func (w *writer) commit(ctx context.Context, batch []queued) []error {
	errs := make([]error, len(batch))
	failed, err := w.inTx(ctx, batch)
	if err == nil {
		return errs
	}
	if failed < 0 || len(batch) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range batch {
		_, errs[i] = w.inTx(ctx, batch[i:i+1])
	}
	return errs
}

// inTx applies writes in one transaction. On error it returns the index of
// the write that failed, or -1 when the transaction did.
func (w *writer) inTx(ctx context.Context, batch []queued) (int, error) {
	name := "commit writes"
	if len(batch) == 1 {
		name = batch[0].op.describe()
	}
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("%s: begin transaction: %w", name, err)
	}
	w.tx = tx
	w.newMetrics, w.newSources, w.touched, w.finished = w.newMetrics[:0], w.newSources[:0], w.touched[:0], w.finished[:0]
	clear(w.onCommit)
	w.onCommit = w.onCommit[:0]
	for i, q := range batch {
		if err := q.op.apply(ctx, w); err != nil {
			w.rollback()
			return i, fmt.Errorf("%s: %w", q.op.describe(), err)
		}
	}
	if err := tx.Commit(); err != nil {
		w.rollback()
		return -1, fmt.Errorf("%s: commit transaction: %w", name, err)
	}
	w.tx = nil
	for _, f := range w.onCommit {
		f()
	}
	for _, runID := range w.finished {
		for k := range w.encoders {
			if k.runID == runID {
				delete(w.encoders, k)
			}
		}
	}
	return 0, nil
}

// rollback abandons the transaction and forgets what it taught the writer:
// names it added and the encoder state of every chain it wrote to (their next
// sample is a keyframe).
func (w *writer) rollback() {
	_ = w.tx.Rollback() // the error is the one being returned already
	w.tx = nil
	for _, n := range w.newMetrics {
		delete(w.metricIDs, n)
	}
	for _, n := range w.newSources {
		delete(w.sourceIDs, n)
	}
	for _, k := range w.touched {
		delete(w.encoders, k)
	}
	w.lastColumns = nil // its ids may be names just forgotten
}

// stmt returns the transaction's form of a statement prepared once.
func (w *writer) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, ok := w.stmts[query]
	if !ok {
		var err error
		if st, err = w.conn.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		w.stmts[query] = st
	}
	return w.tx.StmtContext(ctx, st), nil
}

func (w *writer) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (w *writer) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// execOne runs an UPDATE that must change one row.
func (w *writer) execOne(ctx context.Context, query string, args ...any) error {
	res, err := w.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// metricID returns the dictionary id of a metric name, adding it if new.
func (w *writer) metricID(ctx context.Context, name string) (int64, error) {
	if id, ok := w.metricIDs[name]; ok {
		return id, nil
	}
	if !w.namesLoaded {
		if err := w.loadMetricNames(ctx); err != nil {
			return 0, err
		}
		if id, ok := w.metricIDs[name]; ok {
			return id, nil
		}
	}
	id, err := w.upsertName(ctx, "metric_names", name)
	if err != nil {
		return 0, fmt.Errorf("add metric name %q: %w", name, err)
	}
	w.metricIDs[name] = id
	w.newMetrics = append(w.newMetrics, name)
	return id, nil
}

// loadMetricNames reads the whole dictionary once, so a new run of known
// metrics costs no lookups.
func (w *writer) loadMetricNames(ctx context.Context) error {
	rows, err := w.tx.QueryContext(ctx, "SELECT id, name FROM metric_names")
	if err != nil {
		return fmt.Errorf("load metric names: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return fmt.Errorf("load metric names: %w", err)
		}
		w.metricIDs[name] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load metric names: %w", err)
	}
	w.namesLoaded = true
	return nil
}

// sourceID returns the dictionary id of a sample source, adding it if new.
func (w *writer) sourceID(ctx context.Context, name string) (int64, error) {
	if id, ok := w.sourceIDs[name]; ok {
		return id, nil
	}
	id, err := w.upsertName(ctx, "sample_sources", name)
	if err != nil {
		return 0, fmt.Errorf("add sample source %q: %w", name, err)
	}
	w.sourceIDs[name] = id
	w.newSources = append(w.newSources, name)
	return id, nil
}

// upsertName returns the id of name in a dictionary table, inserting it when
// missing (another process may have added it since this one looked).
func (w *writer) upsertName(ctx context.Context, table, name string) (int64, error) {
	row, err := w.queryRow(ctx, "INSERT INTO "+table+" (name) VALUES (?) "+
		"ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id", name)
	if err != nil {
		return 0, err
	}
	var id int64
	err = row.Scan(&id)
	return id, err
}

// close releases the prepared statements and the connection.
func (w *writer) close() error {
	var errs []error
	for _, st := range w.stmts {
		errs = append(errs, st.Close())
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}
