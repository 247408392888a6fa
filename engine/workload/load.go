package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Limits and defaults of LoadSpec.
const (
	DefaultLoadBatch = 1000
	MaxLoadBatch     = 100000
	MaxThreads       = 256
	// maxBatchMemory bounds threads x batch x doc_bytes, the documents a
	// load holds in memory at once.
	maxBatchMemory = 1 << 30
)

// mib is the MB of wtd's figures: 2^20 bytes, as in the mongo shell.
const mib = 1 << 20

// LoadSpec says what Load inserts: Docs documents of about DocBytes bytes
// each, with _id StartID, StartID+1, ..., StartID+Docs-1, into NS.
type LoadSpec struct {
	NS       string `json:"ns"`        // "db.coll"
	Docs     int64  `json:"docs"`      // >= 1
	DocBytes int    `json:"doc_bytes"` // BSON size of each document, [32, 16 MB]
	Batch    int    `json:"batch"`     // documents per ordered insertMany, [1, 100000]; 0 means 1000
	Threads  int    `json:"threads"`   // concurrent batches, [1, 256]; 0 means 1
	StartID  int64  `json:"start_id"`  // first _id
	// Date, if set, gives each document a date field (see DateSpec).
	Date *DateSpec `json:"date,omitempty"`
}

// LoadResult is what a load did. Docs and Bytes count acknowledged
// documents; Batch describes the successful batches (their latency in
// microseconds) and counts the failed ones in Batch.Errors; Errors counts
// the documents that were not inserted.
type LoadResult struct {
	Docs       int64         `json:"docs"`
	Bytes      int64         `json:"bytes"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	DocsPerSec float64       `json:"docs_per_sec"`
	MBPerSec   float64       `json:"mb_per_sec"` // MB = 2^20 bytes
	Batch      OpStats       `json:"batch"`
	Errors     int64         `json:"errors"`
}

// Load inserts spec.Docs incompressible documents
// {_id: <int64>, pad: BinData(0, <random bytes>)} of spec.DocBytes BSON bytes
// each, in ordered insertMany batches of spec.Batch taken in turn by
// spec.Threads goroutines (thread i does not own a fixed id range: each
// takes the next unclaimed batch). The bytes of every document are fresh
// pseudo-random, so snappy or zlib cannot shrink them.
//
// client must be connected to a server that wtd controls, on loopback: a
// load writes as fast as the server accepts. h.Progress gets the
// acknowledged and total document counts; h.Down is asked when every batch
// fails (see Hooks).
//
// A failed batch is counted (its documents before the first write error are
// acknowledged, the rest are errors) and the load goes on; if no batch has
// succeeded for a second while some failed, Load stops with an
// *AllFailingError (or h.Down's error). When ctx is done Load stops promptly
// and returns what was acknowledged so far together with ctx's cause; when
// that cause is a DownError, Elapsed and the rates end when the server went down (or
// at the last acknowledged batch, if later). Load also returns an error if
// any document was not inserted.
func Load(ctx context.Context, client *mongo.Client, spec LoadSpec, h Hooks) (LoadResult, error) {
	spec, db, coll, err := checkLoadSpec(spec)
	if err != nil {
		return LoadResult{}, err
	}
	l := &loadRun{spec: spec, coll: client.Database(db).Collection(coll), down: h.Down}
	res, err := l.run(ctx, h.Progress)
	if err != nil {
		return res, fmt.Errorf("load %s: %w", l.spec.NS, err)
	}
	return res, nil
}

// checkLoadSpec fills in defaults and checks every field.
func checkLoadSpec(s LoadSpec) (LoadSpec, string, string, error) {
	db, coll, err := SplitNS(s.NS)
	if err != nil {
		return s, "", "", fmt.Errorf("load: %w", err)
	}
	if s.Batch == 0 {
		s.Batch = DefaultLoadBatch
	}
	if s.Threads == 0 {
		s.Threads = 1
	}
	checks := []error{
		checkRange("docs", s.Docs, 1, math.MaxInt64),
		checkRange("doc_bytes", int64(s.DocBytes), int64(minDocBytes+s.Date.elemLen()), maxDocBytes),
		s.Date.check(),
		checkRange("batch", int64(s.Batch), 1, MaxLoadBatch),
		checkRange("threads", int64(s.Threads), 1, MaxThreads),
		checkRange("start_id", s.StartID, 0, math.MaxInt64-max(s.Docs, 0)),
	}
	if err := errors.Join(checks...); err != nil {
		return s, "", "", fmt.Errorf("load %s: %w", s.NS, err)
	}
	inMemory := int64(min(int64(s.Batch), s.Docs)) * int64(s.DocBytes) * int64(min(int64(s.Threads), s.Docs))
	if inMemory > maxBatchMemory {
		return s, "", "", fmt.Errorf("load %s: threads %d x batch %d x doc_bytes %d = %d MB of documents in memory, more than %d MB: lower batch or threads",
			s.NS, s.Threads, s.Batch, s.DocBytes, inMemory/mib, maxBatchMemory/mib)
	}
	return s, db, coll, nil
}

// checkRange returns an error naming field, v and [lo, hi] unless v is in
// that range.
func checkRange(field string, v, lo, hi int64) error {
	if v >= lo && v <= hi {
		return nil
	}
	if hi == math.MaxInt64 {
		return fmt.Errorf("%s %d out of range [%d, 2^63-1]", field, v, lo)
	}
	return fmt.Errorf("%s %d out of range [%d, %d]", field, v, lo, hi)
}

// SplitNS splits a namespace "db.coll" at its first dot; the error names
// ns and the form it must have.
func SplitNS(ns string) (db, coll string, err error) {
	db, coll, ok := strings.Cut(ns, ".")
	if !ok || db == "" || coll == "" || strings.ContainsAny(db, "/\\ \"$") {
		return "", "", fmt.Errorf("ns %q is not \"db.collection\"", ns)
	}
	return db, coll, nil
}

// loadRun is one Load: its spec, its threads' shared batch counter and what
// they report.
type loadRun struct {
	spec      LoadSpec
	coll      *mongo.Collection
	nextBatch atomic.Int64
	first     firstFailure
	start     time.Time
	// down, when set, tells whether the server went down (see Hooks).
	down func() error
}

// loadThread is the state one load goroutine owns; the atomics are read by
// the watching goroutine.
type loadThread struct {
	hist       *hdrhistogram.Histogram
	docs       atomic.Int64 // acknowledged
	badDocs    atomic.Int64
	okBatches  atomic.Int64
	badBatches atomic.Int64
	// lastOK is when the thread's last successful batch ended (from the
	// start); read once the thread has ended.
	lastOK time.Duration
	_      [64]byte // keep threads' counters off each other's cache lines
}

func (l *loadRun) run(ctx context.Context, progress func(done, total int64)) (LoadResult, error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	threads := make([]*loadThread, min(int64(l.spec.Threads), l.batches()))
	for i := range threads {
		threads[i] = &loadThread{hist: newLatencyHistogram()}
	}
	l.start = time.Now()
	start := l.start
	var wg sync.WaitGroup
	for _, t := range threads {
		wg.Go(func() { l.insertBatches(runCtx, t, rand.Uint64()) })
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	watch := newFailWatch(start)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	report := func() {
		if progress != nil {
			progress(sumLoad(threads, func(t *loadThread) int64 { return t.docs.Load() }), l.spec.Docs)
		}
	}
	for running := true; running; {
		select {
		case <-finished:
			running = false
		case now := <-tick.C:
			report()
			ok := sumLoad(threads, func(t *loadThread) int64 { return t.okBatches.Load() })
			bad := sumLoad(threads, func(t *loadThread) int64 { return t.badBatches.Load() })
			if watch.allFailing(now, ok, bad) {
				cancel(failureCause(l.down, l.first.get()))
			}
		}
	}
	var lastOK time.Duration
	for _, t := range threads {
		lastOK = max(lastOK, t.lastOK)
	}
	elapsed := upTime(runCtx, start, lastOK, time.Since(start))
	report()
	res := l.result(threads, elapsed)
	if err := context.Cause(runCtx); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return res, err
	}
	if res.Errors > 0 {
		return res, fmt.Errorf("%d of %d documents not inserted, the first failure: %w", res.Errors, l.spec.Docs, l.first.get())
	}
	return res, nil
}

func sumLoad(threads []*loadThread, f func(*loadThread) int64) int64 {
	var n int64
	for _, t := range threads {
		n += f(t)
	}
	return n
}

// batches returns how many batches the load has.
func (l *loadRun) batches() int64 {
	b := int64(l.spec.Batch)
	return (l.spec.Docs + b - 1) / b
}

// insertBatches claims and inserts batches until none is left or ctx is
// done. The documents are built in one buffer that is reused for every
// batch: the driver has copied them by the time InsertMany returns.
func (l *loadRun) insertBatches(ctx context.Context, t *loadThread, seed uint64) {
	r := &padRand{s: seed}
	date := l.spec.Date
	size, pad := l.spec.DocBytes, padBytes(l.spec.DocBytes)-date.elemLen()
	batch := int64(l.spec.Batch)
	buf := make([]byte, 0, min(batch, l.spec.Docs)*int64(size))
	docs := make([]bson.Raw, 0, min(batch, l.spec.Docs))
	for ctx.Err() == nil {
		b := l.nextBatch.Add(1) - 1
		first := b * batch
		if first >= l.spec.Docs {
			return
		}
		n := min(batch, l.spec.Docs-first)
		buf, docs = buf[:0], docs[:0]
		for i := range n {
			at := len(buf)
			var ms int64
			if date != nil {
				ms = date.pick(r.next())
			}
			buf = appendDatedDoc(buf, l.spec.StartID+first+i, pad, r, date, ms)
			docs = append(docs, bson.Raw(buf[at:len(buf):len(buf)]))
		}
		began := time.Now()
		_, err := l.coll.InsertMany(ctx, docs)
		took := time.Since(began)
		if err == nil {
			recordLatency(t.hist, took)
			t.lastOK = time.Since(l.start)
			t.docs.Add(n)
			t.okBatches.Add(1)
			continue
		}
		if ctx.Err() != nil {
			return // stopped: the batch is neither done nor an error
		}
		l.first.record(fmt.Errorf("insert _id %d..%d: %w", l.spec.StartID+first, l.spec.StartID+first+n-1, err))
		done := acknowledgedPrefix(err)
		t.docs.Add(done)
		t.badDocs.Add(n - done)
		t.badBatches.Add(1)
	}
}

// acknowledgedPrefix returns how many documents of a failed ordered
// insertMany the server wrote: those before the first write error.
func acknowledgedPrefix(err error) int64 {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) == 0 {
		return 0
	}
	first := bwe.WriteErrors[0].Index
	for _, we := range bwe.WriteErrors[1:] {
		first = min(first, we.Index)
	}
	return int64(first)
}

func (l *loadRun) result(threads []*loadThread, elapsed time.Duration) LoadResult {
	hist := newLatencyHistogram()
	var res LoadResult
	var badBatches int64
	for _, t := range threads {
		hist.Merge(t.hist)
		res.Docs += t.docs.Load()
		res.Errors += t.badDocs.Load()
		badBatches += t.badBatches.Load()
	}
	res.Bytes = res.Docs * int64(l.spec.DocBytes)
	res.Elapsed = elapsed
	if s := elapsed.Seconds(); s > 0 {
		res.DocsPerSec = float64(res.Docs) / s
		res.MBPerSec = float64(res.Bytes) / mib / s
	}
	res.Batch = latencyStats(hist, badBatches, elapsed)
	return res
}
