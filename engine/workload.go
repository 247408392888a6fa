package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Operation names, the keys of WorkloadResult.Ops and of the series maps.
const (
	OpRead   = "read"
	OpUpdate = "update"
	OpInsert = "insert"
)

// opKind indexes the per-operation arrays of a workload.
type opKind int

const (
	opRead opKind = iota
	opUpdate
	opInsert
	numOps
)

var opNames = [numOps]string{OpRead, OpUpdate, OpInsert}

// Mix weighs the operations of a workload. The weights are relative (they
// need not sum to 1), none may be negative, and at least one must be > 0.
type Mix struct {
	Read   float64 `json:"read"`
	Update float64 `json:"update"`
	Insert float64 `json:"insert"`
}

// WorkloadSpec says what RunWorkload does.
//
// Reads are FindOne by _id, updates are UpdateOne by _id setting the field
// pad to DocBytes-28 fresh random bytes (so an updated document keeps the
// size Load gave it), inserts are InsertOne of a Load-style document with a
// fresh _id counting up from InsertStartID.
type WorkloadSpec struct {
	NS string `json:"ns"` // "db.coll"
	// Ops and Duration bound the run; at least one must be > 0, and with
	// both the run ends at whichever comes first.
	Ops      int64         `json:"ops"`
	Duration time.Duration `json:"duration_ns"`
	Threads  int           `json:"threads"` // [1, 256]; 0 means 1
	Mix      Mix           `json:"mix"`
	// KeySpace is the number of existing documents: _ids 0..KeySpace-1.
	// Reads and updates need it >= 1.
	KeySpace int64 `json:"key_space"`
	// WorkingSetKeys narrows reads and updates to _ids in
	// [0, WorkingSetKeys); 0 means KeySpace. See WorkingSetKeys (the
	// function) to derive it from a fraction or a size in MB.
	WorkingSetKeys int64 `json:"working_set_keys"`
	// Distribution of reads and updates over the working set: "uniform"
	// (the default) or "zipfian" (YCSB's, theta 0.99, hot keys scattered
	// over the working set).
	Distribution string `json:"distribution"`
	// DocBytes is the BSON size of inserted documents and of updated ones,
	// [32, 16 MB]; needed when the mix has updates or inserts.
	DocBytes int `json:"doc_bytes"`
	// Seed makes the sequence of operations and keys repeatable: thread i
	// draws from PCG(Seed, i).
	Seed int64 `json:"seed"`
	// InsertStartID is the first _id inserted; 0 means KeySpace. Pass the
	// previous run's NextInsertID to run twice on the same collection.
	InsertStartID int64 `json:"insert_start_id"`
	// Date, if set, gives each inserted document a date field (see
	// DateSpec).
	Date *DateSpec `json:"date,omitempty"`
}

// WorkloadResult is what a workload did. Ops has an entry for each
// operation the mix uses; Total merges them. Latencies are those of the
// successful operations, in microseconds; Count counts successes and
// Errors failures.
type WorkloadResult struct {
	Elapsed time.Duration      `json:"elapsed_ns"`
	Ops     map[string]OpStats `json:"ops"`
	Total   OpStats            `json:"total"`
	// Series has one point per second of the run, from second 0 to the
	// last second in which an operation finished (which may be partial).
	Series []SecondPoint `json:"series"`
	// NextInsertID is the first _id that the run did not use for an insert.
	NextInsertID int64 `json:"next_insert_id"`
}

// SecondPoint is one second of a workload: per operation, how many
// succeeded, the p99 of their latency in microseconds (2 significant
// digits; 0 when none succeeded) and, when any failed, how many failed. An
// operation counts in the second in which it finished.
type SecondPoint struct {
	Second    int                `json:"second"`
	Counts    map[string]int64   `json:"counts"`
	P99Micros map[string]float64 `json:"p99_micros"`
	Errors    map[string]int64   `json:"errors,omitempty"`
}

// RunWorkload runs spec's operations against client from spec.Threads
// goroutines until spec.Ops operations have been issued or spec.Duration
// has passed (an operation in flight then is let finish).
//
// client must be connected to a server that wtd controls, on loopback: a
// workload sends requests as fast as the server answers. progress, if not
// nil, is called from RunWorkload's own goroutine every 250 ms and once at
// the end, with the finished operations and spec.Ops (0 when the run is
// bounded by Duration only).
//
// Each thread has its own PRNG, histograms and counters, merged at the end;
// measuring an operation costs two clock readings, two histogram records
// and a few counter increments, with no lock. A failed operation is
// counted and the run goes on; if every operation has failed for a second,
// RunWorkload stops with an *AllFailingError quoting the first failure. A
// read or update of an _id that does not exist counts as a failure. When ctx
// is done RunWorkload stops promptly and returns what was done so far
// together with ctx's cause; the operations cut short are not counted.
func RunWorkload(ctx context.Context, client *mongo.Client, spec WorkloadSpec, progress func(done, total int64)) (WorkloadResult, error) {
	w, err := newWorkloadRun(client, spec)
	if err != nil {
		return WorkloadResult{}, err
	}
	res, err := w.run(ctx, progress)
	if err != nil {
		return res, fmt.Errorf("run workload %s: %w", spec.NS, err)
	}
	return res, nil
}

// workloadRun is one RunWorkload: the checked spec and what its threads
// share (all read-only or atomic).
type workloadRun struct {
	spec        WorkloadSpec
	coll        *mongo.Collection
	used        [numOps]bool
	readBelow   float64 // a draw u in [0, 1) below readBelow is a read,
	updateBelow float64 // below updateBelow an update, else an insert
	keys        *keyPicker
	padLen      int
	issued      atomic.Int64 // operations claimed, when spec.Ops bounds the run
	claim       int64        // how many a thread claims at once
	nextInsert  atomic.Int64
	first       firstFailure
	series      *seriesCollector
	start       time.Time
	// abort, when set, ends the operations in flight on the run's own
	// client (by closing its connections); the threads then give the
	// driver contexts without a Done channel, which spares the driver a
	// cancellation listener per operation (a goroutine hand-off that cost
	// about 10% of the client's CPU per point read).
	abort func()
}

func newWorkloadRun(client *mongo.Client, spec WorkloadSpec) (*workloadRun, error) {
	w := &workloadRun{}
	db, coll, err := w.check(spec)
	if err != nil {
		return nil, err
	}
	if client != nil {
		w.coll = client.Database(db).Collection(coll)
	}
	return w, nil
}

// check fills in defaults, checks every field and derives what the threads
// need; the errors name the field, the value and the allowed range.
func (w *workloadRun) check(s WorkloadSpec) (db, coll string, err error) {
	db, coll, err = splitDBColl(s.NS)
	if err != nil {
		return "", "", fmt.Errorf("run workload: %w", err)
	}
	fail := func(err error) (string, string, error) {
		return "", "", fmt.Errorf("run workload %s: %w", s.NS, err)
	}
	if s.Threads == 0 {
		s.Threads = 1
	}
	m := s.Mix
	for _, f := range []struct {
		name string
		v    float64
	}{{"mix.read", m.Read}, {"mix.update", m.Update}, {"mix.insert", m.Insert}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return fail(fmt.Errorf("%s %v out of range [0, +inf)", f.name, f.v))
		}
	}
	sum := m.Read + m.Update + m.Insert
	if sum == 0 {
		return fail(errors.New("mix has no operation: give read, update or insert a weight > 0"))
	}
	w.used = [numOps]bool{m.Read > 0, m.Update > 0, m.Insert > 0}
	checks := []error{
		checkRange("ops", s.Ops, 0, math.MaxInt64),
		checkRange("duration_ns", int64(s.Duration), 0, math.MaxInt64),
		checkRange("threads", int64(s.Threads), 1, MaxThreads),
		checkRange("key_space", s.KeySpace, 0, math.MaxInt64),
		checkRange("insert_start_id", s.InsertStartID, 0, math.MaxInt64),
	}
	if err := errors.Join(checks...); err != nil {
		return fail(err)
	}
	if s.Ops == 0 && s.Duration == 0 {
		return fail(errors.New("ops 0 and duration 0s: one of them must be > 0"))
	}
	if s.WorkingSetKeys == 0 {
		s.WorkingSetKeys = s.KeySpace
	}
	if w.used[opRead] || w.used[opUpdate] {
		if err := checkRange("key_space", s.KeySpace, 1, math.MaxInt64); err != nil {
			return fail(fmt.Errorf("%w (reads and updates pick existing _ids 0..key_space-1)", err))
		}
		if err := checkRange("working_set_keys", s.WorkingSetKeys, 1, s.KeySpace); err != nil {
			return fail(err)
		}
		if w.keys, err = newKeyPicker(s.Distribution, s.WorkingSetKeys); err != nil {
			return fail(err)
		}
	} else if s.Distribution != "" && s.Distribution != DistUniform && s.Distribution != DistZipfian {
		return fail(fmt.Errorf("distribution %q is not %q or %q", s.Distribution, DistUniform, DistZipfian))
	}
	if err := s.Date.check(); err != nil {
		return fail(err)
	}
	if w.used[opUpdate] || w.used[opInsert] {
		if err := checkRange("doc_bytes", int64(s.DocBytes), int64(minDocBytes+s.Date.elemLen()), maxDocBytes); err != nil {
			return fail(fmt.Errorf("%w (the size of updated and inserted documents)", err))
		}
		w.padLen = padBytes(s.DocBytes) - s.Date.elemLen()
	}
	if s.InsertStartID == 0 {
		s.InsertStartID = s.KeySpace
	}
	w.readBelow, w.updateBelow = m.Read/sum, (m.Read+m.Update)/sum
	if !w.used[opInsert] { // no rounding may turn a draw into an insert
		w.updateBelow = 2
		if !w.used[opUpdate] {
			w.readBelow = 2
		}
	}
	w.claim = 1
	if s.Ops > 0 {
		w.claim = max(1, min(64, s.Ops/(int64(s.Threads)*100)))
	}
	w.nextInsert.Store(s.InsertStartID)
	w.spec = s
	return db, coll, nil
}

func (w *workloadRun) run(ctx context.Context, progress func(done, total int64)) (WorkloadResult, error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if w.abort != nil {
		stop := context.AfterFunc(runCtx, w.abort)
		defer stop()
	}

	threads := make([]*workloadThread, w.spec.Threads)
	for i := range threads {
		threads[i] = newWorkloadThread(i, w.spec.Seed, w.used)
	}
	w.series = newSeriesCollector(len(threads), w.used)
	w.start = time.Now()
	var wg sync.WaitGroup
	for _, t := range threads {
		wg.Go(func() { w.work(runCtx, t) })
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	watch := newFailWatch(w.start)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	counts := func() (done, failed int64) {
		for _, t := range threads {
			done += t.done.Load()
			failed += t.failed.Load()
		}
		return done, failed
	}
	for running := true; running; {
		select {
		case <-finished:
			running = false
		case now := <-tick.C:
			done, failed := counts()
			if progress != nil {
				progress(done, w.spec.Ops)
			}
			if watch.allFailing(now, done-failed, failed) {
				cancel(&AllFailingError{Window: failWindow, First: w.first.get()})
			}
		}
	}
	elapsed := time.Since(w.start)
	if progress != nil {
		done, _ := counts()
		progress(done, w.spec.Ops)
	}
	res := w.result(threads, elapsed)
	if err := context.Cause(runCtx); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return res, err
	}
	return res, nil
}

// claimOps claims up to w.claim of the run's operations and returns how
// many it got; 0 means the run's operations are all claimed.
func (w *workloadRun) claimOps() int64 {
	end := w.issued.Add(w.claim)
	start := end - w.claim
	if start >= w.spec.Ops {
		return 0
	}
	return min(end, w.spec.Ops) - start
}

func (w *workloadRun) result(threads []*workloadThread, elapsed time.Duration) WorkloadResult {
	res := WorkloadResult{
		Elapsed:      elapsed,
		Ops:          map[string]OpStats{},
		Series:       w.series.points,
		NextInsertID: w.nextInsert.Load(),
	}
	total := newLatencyHistogram()
	var totalErrs int64
	for op := range numOps {
		if !w.used[op] {
			continue
		}
		h := newLatencyHistogram()
		var errs int64
		for _, t := range threads {
			h.Merge(t.hists[op])
			errs += t.errs[op]
		}
		res.Ops[opNames[op]] = latencyStats(h, errs, elapsed)
		total.Merge(h)
		totalErrs += errs
	}
	res.Total = latencyStats(total, totalErrs, elapsed)
	if res.Series == nil {
		res.Series = []SecondPoint{}
	}
	return res
}

// histogramsFor returns a histogram from newHist for each used operation,
// nil for the others.
func histogramsFor(used [numOps]bool, newHist func() *hdrhistogram.Histogram) [numOps]*hdrhistogram.Histogram {
	var hs [numOps]*hdrhistogram.Histogram
	for op := range numOps {
		if used[op] {
			hs[op] = newHist()
		}
	}
	return hs
}
