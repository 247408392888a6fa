package workload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Operation names, the keys of Result.Ops and of the series maps.
const (
	OpRead   = "read"
	OpUpdate = "update"
	OpInsert = "insert"
	OpScan   = "scan"
	OpRMW    = "rmw"
	OpQuery  = "query"
)

// opKind indexes the per-operation arrays of a workload.
type opKind int

const (
	opRead opKind = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opQuery
	numOps
)

var opNames = [numOps]string{OpRead, OpUpdate, OpInsert, OpScan, OpRMW, OpQuery}

// Mix weighs the operations of a workload. The weights are relative (they
// need not sum to 1), none may be negative, and at least one must be > 0.
type Mix struct {
	Read   float64 `json:"read"`
	Update float64 `json:"update"`
	Insert float64 `json:"insert"`
	Scan   float64 `json:"scan,omitempty"`
	RMW    float64 `json:"rmw,omitempty"`
	Query  float64 `json:"query,omitempty"`
}

// weights returns the weights by opKind.
func (m Mix) weights() [numOps]float64 {
	return [numOps]float64{m.Read, m.Update, m.Insert, m.Scan, m.RMW, m.Query}
}

// Spec says what Run does.
//
// Reads are FindOne by _id, updates are UpdateOne by _id setting the field
// pad to DocBytes-28 fresh random bytes (so an updated document keeps the
// size Load gave it), inserts are InsertOne of a Load-style document with a
// fresh _id counting up from InsertStartID. A scan is a find of the
// documents from a drawn _id up, in _id order, as many as drawn uniformly
// from [1, ScanMax], in one batch; a read-modify-write (rmw) is a read and
// then an update of the same _id, measured as one operation; a query runs
// Query (a find drained to its end, or a count).
type Spec struct {
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
	// (the default), "zipfian" (the zipf law, theta 0.99, over the working
	// set's keys, hot keys scattered), "scrambled_zipfian" (YCSB's
	// zipfian), "latest" or "hotspot"; see the Dist constants.
	Distribution string `json:"distribution"`
	// DocBytes is the BSON size of inserted documents and of updated ones,
	// [32, 16 MB]; needed when the mix has updates or inserts.
	DocBytes int `json:"doc_bytes"`
	// Seed makes the sequence of operations and keys repeatable: thread i
	// draws from PCG(Seed, i).
	Seed int64 `json:"seed"`
	// Workload names a preset, "ycsb-a" to "ycsb-f" (see Presets): its mix,
	// distribution and scan length fill the fields left zero.
	Workload string `json:"workload,omitempty"`
	// HotFraction and HotOps shape the hotspot distribution: HotOps of the
	// operations go to the first HotFraction of the working set; 0 means
	// DefaultHotFraction and DefaultHotOps.
	HotFraction float64 `json:"hot_fraction,omitempty"`
	HotOps      float64 `json:"hot_ops,omitempty"`
	// ScanMax bounds the length of scans, [1, 100000]; 0 means 100.
	ScanMax int `json:"scan_max,omitempty"`
	// Query is what a query operation runs; required when Mix.Query > 0.
	Query *QuerySpec `json:"query,omitempty"`
	// Rate, when > 0, runs an open loop: operations are scheduled at
	// Rate per second over all threads, each latency is measured from
	// its scheduled start, and the service time from the send is kept
	// beside it. RateSchedule instead steps through rates, each for
	// RateStep (the last one holds); without Ops or Duration the run lasts
	// the schedule.
	Rate         float64       `json:"rate,omitempty"`
	RateSchedule []float64     `json:"rate_schedule,omitempty"`
	RateStep     time.Duration `json:"rate_step_ns,omitempty"`
	// Warmup (a time) or WarmupOps (a number of finished operations) runs
	// first: its operations count in Series, not in the summary, and Ops
	// and Duration bound what comes after it.
	Warmup    time.Duration `json:"warmup_ns,omitempty"`
	WarmupOps int64         `json:"warmup_ops,omitempty"`
	// Watch names numeric serverStatus fields (dotted paths, as wtd
	// samples names them) read every WatchInterval (0: 100 ms) during the
	// run, and once right before and right after it.
	Watch         []string      `json:"watch,omitempty"`
	WatchInterval time.Duration `json:"watch_interval_ns,omitempty"`
	// InsertStartID is the first _id inserted; 0 means KeySpace. Pass the
	// previous run's NextInsertID to run twice on the same collection.
	InsertStartID int64 `json:"insert_start_id"`
	// Date, if set, gives each inserted document a date field (see
	// DateSpec).
	Date *DateSpec `json:"date,omitempty"`
}

// Result is what a workload did. Ops has an entry for each
// operation the mix uses; Total merges them. Latencies are those of the
// successful operations, in microseconds; Count counts successes and
// Errors failures. With a warm-up, Elapsed, Ops and Total cover the time
// after it only. With a rate, latencies run from each operation's
// scheduled start (corrected for coordinated omission) and each OpStats
// has the service times beside them.
type Result struct {
	Elapsed time.Duration      `json:"elapsed_ns"`
	Ops     map[string]OpStats `json:"ops"`
	Total   OpStats            `json:"total"`
	// Series has one point per second of the run, from second 0 to the
	// last second in which an operation finished (which may be partial),
	// warm-up included.
	Series []SecondPoint `json:"series"`
	// NextInsertID is the first _id that the run did not use for an insert.
	NextInsertID int64 `json:"next_insert_id"`
	// Workload, Mix and Distribution are what ran, presets applied.
	Workload     string `json:"workload,omitempty"`
	Mix          Mix    `json:"mix"`
	Distribution string `json:"distribution"`
	// Rate says how well the schedule was kept (nil without a rate).
	Rate *RateResult `json:"rate,omitempty"`
	// Behind is true when the run did not keep its rate: the achieved
	// rate is more than 2% below the target.
	Behind bool `json:"behind,omitempty"`
	// Warmup is the warm-up the run had (nil: none).
	Warmup *WarmupResult `json:"warmup,omitempty"`
	// Watch has the serverStatus fields of Spec.Watch.
	Watch map[string]WatchStats `json:"watch,omitempty"`
}

// SecondPoint is one second of a workload: per operation, how many
// succeeded, the p99 of their latency in microseconds (2 significant
// digits; absent from P99Micros when none succeeded: not measured) and,
// when any failed, how many failed. An operation counts in the second in
// which it finished. Warmup marks the seconds that began within the
// warm-up. Runs recorded before wtd left the p99 out have a 0 there beside
// a count of 0: readers take a second's p99 only with a count above 0.
type SecondPoint struct {
	Second    int                `json:"second"`
	Counts    map[string]int64   `json:"counts"`
	P99Micros map[string]float64 `json:"p99_micros"`
	Errors    map[string]int64   `json:"errors,omitempty"`
	Warmup    bool               `json:"warmup,omitempty"`
	// Hist is, per operation with a success in the second, the second's
	// latency histogram in microseconds (hdrhistogram-go's V2 compressed
	// encoding, base64; 2 significant digits): percentiles over any seconds
	// are exact merges of them (MergeSeconds), not averages of per-second
	// percentiles.
	Hist map[string]string `json:"hist,omitempty"`
}

// Run runs spec's operations against client from spec.Threads
// goroutines until spec.Ops operations have been issued or spec.Duration
// has passed (an operation in flight then is let finish).
//
// client must be connected to a server that wtd controls, on loopback: a
// workload sends requests as fast as the server answers. h.Progress gets
// the finished operations and spec.Ops (0 when the run is bounded by
// Duration only); see Hooks for the others.
//
// Each thread has its own PRNG, histograms and counters, merged at the end;
// measuring an operation costs two clock readings, two histogram records
// and a few counter increments, with no lock. A failed operation is
// counted and the run goes on; if every operation has failed for a second,
// Run stops with an *AllFailingError quoting the first failure (or with
// h.Down's error). A read or update of an _id that does not exist counts
// as a failure. When ctx is done Run stops promptly and returns what was
// done so far together with ctx's cause; the operations cut short are not
// counted. When that cause is a DownError, the result covers the time the
// server was up: Elapsed, and so every rate, ends when the server went
// down (or at the last success, if later); the operations that failed
// before the stop count as errors.
func Run(ctx context.Context, client *mongo.Client, spec Spec, h Hooks) (Result, error) {
	p, err := Prepare(spec)
	if err != nil {
		return Result{}, err
	}
	return p.Run(ctx, client, h)
}

// Prepared is a checked workload, ready to run once.
type Prepared struct {
	w   *workloadRun
	ran atomic.Bool
}

// Prepare checks spec and fills in its defaults (presets applied), so
// that a caller can make what the run needs (a client with a connection
// per thread) before the clock starts. The errors name the field, the
// value and the allowed range.
func Prepare(spec Spec) (*Prepared, error) {
	w, err := newWorkloadRun(nil, spec)
	if err != nil {
		return nil, err
	}
	return &Prepared{w: w}, nil
}

// Spec returns the checked spec, defaults filled in.
func (p *Prepared) Spec() Spec { return p.w.spec }

// Run runs the workload against client (see the function Run).
func (p *Prepared) Run(ctx context.Context, client *mongo.Client, h Hooks) (Result, error) {
	w := p.w
	if p.ran.Swap(true) {
		return Result{}, fmt.Errorf("run workload %s: a prepared workload runs once: prepare it again", w.spec.NS)
	}
	db, coll, _ := strings.Cut(w.spec.NS, ".")
	w.coll = client.Database(db).Collection(coll)
	w.hooks = h
	res, err := w.run(ctx)
	if err != nil {
		return res, fmt.Errorf("run workload %s: %w", w.spec.NS, err)
	}
	return res, nil
}

// workloadRun is one Run: the checked spec and what its threads
// share (all read-only or atomic).
type workloadRun struct {
	spec Spec
	coll *mongo.Collection
	used [numOps]bool
	// below[op] is the bound under which a uniform draw in [0, 1) picks
	// op (the first op whose bound is above the draw).
	below      [numOps]float64
	keys       *keyPicker
	padLen     int
	totalOps   int64        // spec.Ops plus the warm-up's operations
	issued     atomic.Int64 // operations claimed, when totalOps bounds the run
	claim      int64        // how many a thread claims at once
	nextInsert atomic.Int64
	first      firstFailure
	series     *seriesCollector
	start      time.Time
	// scan and query are the request templates of scans and queries.
	scan, query *cmdTemplate
	findOpts    *options.FindOptionsBuilder // a non-count query's sort and limit
	// sched is the open loop's schedule, nil for a closed loop.
	sched *rateSchedule
	// warmedOps counts the operations finished in an ops-bound warm-up;
	// warmEnd is when the warm-up ended (from start; -1 not yet).
	warmedOps atomic.Int64
	warmEnd   atomic.Int64
	// hooks are the caller's additions (see Hooks).
	hooks Hooks
}

func newWorkloadRun(client *mongo.Client, spec Spec) (*workloadRun, error) {
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
func (w *workloadRun) check(s Spec) (db, coll string, err error) {
	db, coll, err = SplitNS(s.NS)
	if err != nil {
		return "", "", fmt.Errorf("run workload: %w", err)
	}
	fail := func(err error) (string, string, error) {
		return "", "", fmt.Errorf("run workload %s: %w", s.NS, err)
	}
	if s.Threads == 0 {
		s.Threads = 1
	}
	if err := applyPreset(&s); err != nil {
		return fail(err)
	}
	weights := s.Mix.weights()
	var sum float64
	for op, v := range weights {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fail(fmt.Errorf("mix.%s %v out of range [0, +inf)", opNames[op], v))
		}
		sum += v
		w.used[op] = v > 0
	}
	if sum == 0 {
		return fail(fmt.Errorf("mix has no operation: give %s a weight > 0", strings.Join(opNames[:], ", ")))
	}
	if err := w.checkOps(&s, coll); err != nil {
		return fail(err)
	}
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
	if w.needsKeys() {
		if err := checkRange("key_space", s.KeySpace, 1, math.MaxInt64); err != nil {
			return fail(fmt.Errorf("%w (reads, updates, scans and queries with %s pick existing _ids 0..key_space-1)", err, KeyPlaceholder))
		}
		if err := checkRange("working_set_keys", s.WorkingSetKeys, 1, s.KeySpace); err != nil {
			return fail(err)
		}
		if w.keys, err = newKeyPickerWith(s.keyOptions()); err != nil {
			return fail(err)
		}
	} else if err := checkDistribution(s.Distribution); err != nil {
		return fail(err)
	}
	if err := s.Date.check(); err != nil {
		return fail(err)
	}
	if w.used[opUpdate] || w.used[opInsert] || w.used[opRMW] {
		if err := checkRange("doc_bytes", int64(s.DocBytes), int64(minDocBytes+s.Date.elemLen()), maxDocBytes); err != nil {
			return fail(fmt.Errorf("%w (the size of updated and inserted documents)", err))
		}
		w.padLen = padBytes(s.DocBytes) - s.Date.elemLen()
	}
	if s.InsertStartID == 0 {
		s.InsertStartID = s.KeySpace
	}
	var cum float64
	for op, v := range weights {
		cum += v
		w.below[op] = cum / sum
	}
	last := numOps - 1
	for ; !w.used[last]; last-- {
		w.below[last] = 2
	}
	w.below[last] = 2 // no rounding may pick an op after the last used one
	w.totalOps = s.Ops
	if s.Ops > 0 && w.sched != nil { // the schedule numbers the warm-up's operations too
		w.totalOps += w.scheduledWarmup(s)
	}
	w.claim = 1
	if w.totalOps > 0 {
		w.claim = max(1, min(64, w.totalOps/(int64(s.Threads)*100)))
	}
	w.nextInsert.Store(s.InsertStartID)
	w.spec = s
	return db, coll, nil
}

func (w *workloadRun) run(ctx context.Context) (Result, error) {
	progress := w.hooks.Progress
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if w.hooks.Abort != nil {
		stop := context.AfterFunc(runCtx, w.hooks.Abort)
		defer stop()
	}
	watch, err := w.startWatch(runCtx)
	if err != nil {
		return Result{}, err
	}

	threads := make([]*workloadThread, w.spec.Threads)
	for i := range threads {
		threads[i] = newWorkloadThread(i, w.spec.Seed, w.used)
	}
	w.series = newSeriesCollector(len(threads), w.used, w.hooks.Status != nil)
	w.warmEnd.Store(w.initialWarmEnd())
	w.start = time.Now()
	if watch != nil {
		watch.run(runCtx)
	}
	var wg sync.WaitGroup
	for _, t := range threads {
		wg.Go(func() { w.work(runCtx, t) })
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	watchFail := newFailWatch(w.start)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	counts := func() (done, failed int64) {
		for _, t := range threads {
			done += t.done.Load()
			failed += t.failed.Load()
		}
		return done, failed
	}
	total := w.progressTotal()
	last := statusLine{at: w.start}
	for running := true; running; {
		select {
		case <-finished:
			running = false
		case now := <-tick.C:
			done, failed := counts()
			if progress != nil {
				progress(done, total)
			}
			w.maybeStatus(&last, now, done)
			if watchFail.allFailing(now, done-failed, failed) {
				cancel(failureCause(w.hooks.Down, w.first.get()))
			}
		}
	}
	elapsed := upTime(runCtx, w.start, lastOK(threads), time.Since(w.start))
	if progress != nil {
		done, _ := counts()
		progress(done, total)
	}
	res := w.result(threads, elapsed)
	if watch != nil {
		res.Watch = watch.finish(runCtx, w.spec.Watch)
	}
	if err := context.Cause(runCtx); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return res, err
	}
	return res, nil
}

// lastOK is when the last successful operation of threads ended (from the
// start).
func lastOK(threads []*workloadThread) time.Duration {
	var last time.Duration
	for _, t := range threads {
		last = max(last, t.lastOK)
	}
	return last
}

// progressTotal is the number of operations progress reports count
// towards (warm-up included), 0 when it is not known beforehand.
func (w *workloadRun) progressTotal() int64 {
	switch {
	case w.spec.Ops == 0:
		return 0
	case w.sched != nil:
		return w.totalOps
	case w.spec.WarmupOps > 0:
		return w.spec.Ops + w.spec.WarmupOps
	case w.spec.Warmup > 0:
		return 0
	}
	return w.spec.Ops
}

// claimOps claims up to w.claim of the run's operations and returns how
// many it got; 0 means the run's operations are all claimed.
func (w *workloadRun) claimOps() int64 {
	end := w.issued.Add(w.claim)
	start := end - w.claim
	if start >= w.totalOps {
		return 0
	}
	return min(end, w.totalOps) - start
}

func (w *workloadRun) result(threads []*workloadThread, elapsed time.Duration) Result {
	warmEnd := time.Duration(w.warmEnd.Load())
	if warmEnd < 0 { // the warm-up never ended
		warmEnd = elapsed
	}
	measured := max(0, elapsed-warmEnd)
	res := Result{
		Elapsed:      measured,
		Ops:          map[string]OpStats{},
		Series:       w.series.points,
		NextInsertID: w.nextInsert.Load(),
		Workload:     w.spec.Workload,
		Mix:          w.spec.Mix,
		Distribution: cmp.Or(w.spec.Distribution, DistUniform),
		Warmup:       w.warmupResult(threads, warmEnd, elapsed),
	}
	total := newLatencyHistogram()
	var totalService *hdrhistogram.Histogram
	if w.sched != nil {
		totalService = newLatencyHistogram()
	}
	var totalErrs, totalDocs int64
	for op := range numOps {
		if !w.used[op] {
			continue
		}
		h := newLatencyHistogram()
		var errs, docs int64
		var service *hdrhistogram.Histogram
		if w.sched != nil {
			service = newLatencyHistogram()
		}
		for _, t := range threads {
			h.Merge(t.hists[op])
			errs += t.errs[op]
			docs += t.docs[op]
			if service != nil {
				service.Merge(t.service[op])
			}
		}
		st := latencyStats(h, errs, measured)
		st.Docs = docs
		if service != nil {
			st.Service = serviceStats(service)
			totalService.Merge(service)
		}
		res.Ops[opNames[op]] = st
		total.Merge(h)
		totalErrs += errs
		totalDocs += docs
	}
	res.Total = latencyStats(total, totalErrs, measured)
	res.Total.Docs = totalDocs
	if totalService != nil {
		res.Total.Service = serviceStats(totalService)
		res.Rate, res.Behind = w.rateResult(threads, warmEnd, elapsed, res.Total.Count+totalErrs)
	}
	if res.Series == nil {
		res.Series = []SecondPoint{}
	}
	if res.Warmup != nil {
		for i := range res.Series {
			res.Series[i].Warmup = time.Duration(res.Series[i].Second)*time.Second < warmEnd
		}
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
