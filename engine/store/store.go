// Package store owns wtd's results database: the SQLite schema and its
// migrations, the single writer that batches what a run records (runs, steps,
// metric samples, events) into transactions, the compact sample encoding, and
// the queries that read it all back, from this process or another one while a
// run is still writing.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// ErrNotFound reports a run, step or other record that does not exist.
var ErrNotFound = errors.New("not found")

// ErrClosed reports a call on a Store after Close.
var ErrClosed = errors.New("store closed")

// Defaults for Options.
const (
	DefaultFlushInterval = 150 * time.Millisecond
	DefaultBatchSize     = 256
	DefaultKeyframeEvery = 60
	DefaultBlockSamples  = 300
	busyTimeoutMillis    = 10000
)

// Options tune a Store; the zero value means the defaults.
type Options struct {
	// FlushInterval is how long queued writes may wait for a transaction.
	// A negative value switches the timer off: writes then wait for a full
	// batch, a call that needs its result, Flush or Close (for tests).
	FlushInterval time.Duration
	// BatchSize is the number of queued writes that starts a transaction.
	BatchSize int
	// KeyframeEvery is how many samples of a source form one delta chain.
	KeyframeEvery int
	// BlockSamples is how many samples of a source are stored together in
	// one block (fewer when they hold over a million values).
	BlockSamples int
}

func (o Options) withDefaults() Options {
	if o.FlushInterval == 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.KeyframeEvery <= 0 {
		o.KeyframeEvery = DefaultKeyframeEvery
	}
	if o.BlockSamples <= 0 {
		o.BlockSamples = DefaultBlockSamples
	}
	return o
}

// Store is an open results database. Its methods are safe for concurrent use.
type Store struct {
	path string
	opts Options
	w    *sql.DB // one connection, held by the writer goroutine
	r    *sql.DB // read-only pool
	self Owner   // this process, for runs it creates and for liveness checks

	mu      sync.Mutex
	queue   []queued
	closed  bool
	failed  error // first failure of an asynchronous write since the last Flush
	nfailed int   // how many more failed
	wake    chan struct{}
	arm     chan struct{} // an asynchronous write waits: start the flush timer
	stop    chan struct{}

	writerCtx    context.Context
	cancelWriter context.CancelFunc
	writerDone   chan struct{}
	wr           *writer // state of the writer goroutine

	names nameCache // metric and source names for readers

	onFailure func(error) // called from the writer for each failed asynchronous write

	hostLock atomic.Pointer[string] // see SetHostLock
}

// ErrNoDatabase is returned by OpenExisting when there is no database.
var ErrNoDatabase = errors.New("no results database")

// Open opens (creating it and its directory if needed) the database at path,
// brings its schema up to date and starts the writer. A new database is
// readable by its owner only (0600, its directory 0700), since playbooks and
// server settings may say more than their owner wants shown.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenExisting opens the database at path like Open, but never creates it
// (nor its directory): a missing file is an error wrapping ErrNoDatabase.
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoDatabase)
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a results database", path)
	}
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close() // SQLite gives its -wal and -shm files the database's mode
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("open store: %w", err)
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := retryBusy(ctx, func() error { return migrate(ctx, w, migrations) }); err != nil {
		w.Close()
		if isCorrupt(err) {
			return nil, damaged(path, err)
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	conn, err := w.Conn(ctx)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		conn.Close()
		w.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{
		path:       path,
		opts:       opts.withDefaults(),
		w:          w,
		r:          r,
		self:       ThisProcess(),
		wake:       make(chan struct{}, 1),
		arm:        make(chan struct{}, 1),
		stop:       make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	s.wr = newWriter(conn, s.opts.KeyframeEvery, s.opts.BlockSamples)
	s.writerCtx, s.cancelWriter = context.WithCancel(context.Background())
	go s.writeLoop()
	return s, nil
}

// openBusyTimeout bounds how long opening waits for other processes that
// open the same database at the same moment.
const openBusyTimeout = 15 * time.Second

// retryBusy runs fn until it does not fail with SQLITE_BUSY. Switching a new
// database to WAL and reading its schema while another process does the same
// can fail at once with SQLITE_BUSY, without waiting for busy_timeout.
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(openBusyTimeout)
	pause := 5 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// isBusy reports an SQLITE_BUSY (or SQLITE_LOCKED) error.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		c := coded.Code() & 0xff
		return c == 5 || c == 6
	}
	return false
}

// isCorrupt reports an SQLITE_CORRUPT error: a damaged database (its
// schema unreadable, say), not a file that is no database at all.
func isCorrupt(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 11
}

// damaged is the error of a results database found damaged, before
// anything was started with it.
func damaged(path string, what any) error {
	return fmt.Errorf("check results database %s: %v: nothing was started; move the file aside or restore a copy (--db names another database)", path, what)
}

// dsn is the data source name of the writer or of the read-only pool.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Flush waits until everything queued so far is committed and returns the
// first error of asynchronous writes (AddSample, AddEvent) since the last
// Flush.
func (s *Store) Flush(ctx context.Context) error {
	if err := s.do(ctx, flushOp{}); err != nil {
		return err
	}
	return s.takeFailure()
}

// Close flushes everything queued, stops the writer and closes the database.
// It returns the first error, including unreported asynchronous ones. When
// ctx ends first, the pending transaction is abandoned.
func (s *Store) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	close(s.stop)
	s.mu.Unlock()

	var errs []error
	select {
	case <-s.writerDone:
	case <-ctx.Done():
		s.cancelWriter()
		<-s.writerDone
		errs = append(errs, fmt.Errorf("close store: %w", ctx.Err()))
	}
	s.cancelWriter()
	errs = append(errs, s.takeFailure())
	if err := s.wr.close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if err := s.w.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	if err := s.r.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// queued is one write waiting for the writer; done is nil for asynchronous
// writes.
type queued struct {
	op   op
	done chan error
}

// enqueue adds an asynchronous write; errors surface from Flush or Close.
func (s *Store) enqueue(o op) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.noteFailure(fmt.Errorf("%s: %w", o.describe(), ErrClosed))
		return
	}
	s.queue = append(s.queue, queued{op: o})
	switch {
	case len(s.queue) >= s.opts.BatchSize:
		s.signal()
	case len(s.queue) == 1:
		select {
		case s.arm <- struct{}{}:
		default:
		}
	}
}

// do queues a write and waits for its transaction to commit.
func (s *Store) do(ctx context.Context, o op) error {
	done := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("%s: %w", o.describe(), ErrClosed)
	}
	s.queue = append(s.queue, queued{op: o, done: done})
	s.signal()
	s.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", o.describe(), ctx.Err())
	}
}

// signal wakes the writer; s.mu is held.
func (s *Store) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// OnFailure registers fn, called (from the writer goroutine, without
// waiting for Flush) with each asynchronous write that fails, so that a
// run can stop at once when its results can no longer be recorded.
func (s *Store) OnFailure(fn func(error)) {
	s.mu.Lock()
	s.onFailure = fn
	s.mu.Unlock()
}

// QuickCheck runs SQLite's quick_check on the database and returns an error
// naming the first problem it finds.
func (s *Store) QuickCheck(ctx context.Context) error {
	fail := func(what any) error { return damaged(s.path, what) }
	rows, err := s.r.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fail(err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(problems) > 0 {
		return fail(fmt.Sprintf("%d problems, first: %s", len(problems), problems[0]))
	}
	return nil
}

// noteFailure records an asynchronous failure; s.mu is held.
func (s *Store) noteFailure(err error) {
	if s.failed == nil {
		s.failed = err
	} else {
		s.nfailed++
	}
}

func (s *Store) takeFailure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err, n := s.failed, s.nfailed
	s.failed, s.nfailed = nil, 0
	if err != nil && n > 0 {
		return fmt.Errorf("%w (and %d more failed writes)", err, n)
	}
	return err
}

// writeLoop is the writer goroutine: it commits the queue in batches until
// Close, then commits what is left. An asynchronous write waits at most
// FlushInterval: the first one queued starts a timer, so an idle store
// wakes nobody.
func (s *Store) writeLoop() {
	defer close(s.writerDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var tick <-chan time.Time
	for {
		select {
		case <-s.wake:
		case <-tick:
			tick = nil
		case <-s.arm:
			if tick == nil && s.opts.FlushInterval > 0 {
				timer.Reset(s.opts.FlushInterval)
				tick = timer.C
			}
			continue
		case <-s.stop:
			s.drain()
			s.sealOpen()
			return
		}
		s.drain()
	}
}

// drain commits everything queued, BatchSize writes per transaction.
func (s *Store) drain() {
	for {
		s.mu.Lock()
		batch := s.queue
		if len(batch) > s.opts.BatchSize {
			batch = batch[:s.opts.BatchSize:s.opts.BatchSize]
		}
		s.queue = s.queue[len(batch):]
		if len(s.queue) == 0 {
			s.queue = nil
		}
		s.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		errs := s.wr.commit(s.writerCtx, batch)
		var failed []error
		s.mu.Lock()
		for i, q := range batch {
			if q.done != nil {
				q.done <- errs[i]
			} else if errs[i] != nil {
				s.noteFailure(errs[i])
				failed = append(failed, errs[i])
			}
		}
		hook := s.onFailure
		s.mu.Unlock()
		if hook != nil {
			for _, err := range failed {
				hook(err)
			}
		}
	}
}

// sealOpen stores the open samples of every chain as blocks, at Close.
func (s *Store) sealOpen() {
	if err := s.wr.commit(s.writerCtx, []queued{{op: sealOp{}}})[0]; err != nil {
		s.mu.Lock()
		s.noteFailure(err)
		s.mu.Unlock()
	}
}

// limitSizeOp caps the database file's pages.
type limitSizeOp struct{ bytes int64 }

func (o *limitSizeOp) describe() string { return "limit the database size" }

func (o *limitSizeOp) apply(ctx context.Context, w *writer) error {
	row, err := w.queryRow(ctx, "PRAGMA page_size")
	if err != nil {
		return err
	}
	var page int64
	if err := row.Scan(&page); err != nil {
		return err
	}
	_, err = w.exec(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", o.bytes/page))
	return err
}

// LimitSize caps the database at about n bytes (never below its current
// size): writes that need more fail as on a full disk. For tests of what a
// run does when its results can no longer be written, and for operators
// who want a hard cap.
func (s *Store) LimitSize(ctx context.Context, n int64) error {
	return s.do(ctx, &limitSizeOp{bytes: n})
}
