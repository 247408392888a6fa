package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// errNoSuchDocument is the failure of a read or update whose _id is not in
// the collection: the spec's key space does not match the data.
var errNoSuchDocument = errors.New("no such document")

// workloadThread is what one workload goroutine owns. Only done and failed
// are read by others (the watching goroutine), atomically; the rest is
// merged after the goroutine has been joined, or handed over per second
// under the series collector's lock.
type workloadThread struct {
	id   int
	rng  *rand.PCG
	pad  padRand
	sec  int // the second the per-second fields are collecting
	errs [numOps]int64
	docs [numOps]int64 // documents returned by scans and queries
	used [numOps]bool
	// measuring is false while the thread's operations are in the
	// warm-up: they then count in the series only.
	measuring bool

	// An open loop's: service times, how late operations began and how
	// many were late, and the timer that waits for the next one.
	service  [numOps]*hdrhistogram.Histogram
	lateness *hdrhistogram.Histogram
	late     int64
	timer    *time.Timer
	warmOps  int64 // operations finished in the warm-up
	// lastOK is when the thread's last successful operation ended (from
	// the start of the run).
	lastOK time.Duration

	hists     [numOps]*hdrhistogram.Histogram // the whole run
	secHists  [numOps]*hdrhistogram.Histogram // the current second
	secCounts [numOps]int64
	secErrs   [numOps]int64

	_      [64]byte
	done   atomic.Int64 // operations finished, failed or not
	failed atomic.Int64
	_      [64]byte
}

func newWorkloadThread(id int, seed int64, used [numOps]bool) *workloadThread {
	return &workloadThread{
		id:        id,
		rng:       rand.NewPCG(uint64(seed), uint64(id)),
		pad:       padRand{s: uint64(seed)*0x9e3779b97f4a7c15 + uint64(id)},
		used:      used,
		measuring: true,
		hists:     histogramsFor(used, newLatencyHistogram),
		secHists:  histogramsFor(used, newSecondHistogram),
	}
}

// opBuffers are one thread's reusable request documents. The BSON lives in
// byte slices that are changed in place; the interface values wrap them once,
// so issuing an operation allocates nothing on wtd's side.
type opBuffers struct {
	filter    []byte // {_id: int64}
	filterArg any
	update    []byte // {$set: {pad: BinData}}
	updateAt  int    // where update's random bytes start
	updateArg any
	insert    []byte // {_id: int64, pad: BinData}
	insertArg any
	more      *moreBuffers // scans, read-modify-writes and queries
}

func (w *workloadRun) newOpBuffers(t *workloadThread) *opBuffers {
	b := &opBuffers{filter: newIDFilter()}
	b.filterArg = bson.Raw(b.filter)
	if w.used[opUpdate] {
		b.update, b.updateAt = newPadUpdate(w.padLen, &t.pad)
		b.updateArg = bson.Raw(b.update)
	}
	if w.used[opInsert] {
		b.insert = appendDatedDoc(make([]byte, 0, w.spec.DocBytes), 0, w.padLen, &t.pad, w.spec.Date, 0)
		b.insertArg = bson.Raw(b.insert)
	}
	return b
}

// work runs operations until the run's operations are all claimed, its
// duration has passed or ctx is done, then hands its last second to the
// series collector. In an open loop each operation first waits for its
// scheduled start; one due before the end that could not start within
// drainGrace after it is not run.
func (w *workloadRun) work(ctx context.Context, t *workloadThread) {
	defer func() { w.series.flush(t, math.MaxInt) }()
	buf := w.newOpBuffers(t)
	buf.more = w.newMoreBuffers(t, buf)
	stop := ctx.Done()
	opCtx := ctx
	if w.hooks.Abort != nil {
		opCtx = context.WithoutCancel(ctx) // Abort ends what is in flight
	}
	if w.sched != nil {
		t.openLoop()
	}
	t.measuring = !w.hasWarmup()
	var claims int64
	var due, claimed time.Time
	last := w.start // when the previous operation ended
	for {
		if w.sched != nil {
			claimed = last // the thread takes the next operation as soon as it is free
			i := w.sched.next.Add(1) - 1
			if w.totalOps > 0 && i >= w.totalOps {
				return
			}
			at := w.sched.at(i)
			t.measuring = w.scheduledMeasured(i, at)
			if w.pastEnd(at) {
				return
			}
			due = w.start.Add(at)
			// One that is already due may start until drainGrace after the end.
			if ok, late := t.waitUntil(due, stop); !ok || (late > 0 && w.pastEnd(at+late-w.drainGrace())) {
				return
			}
		} else {
			if !t.measuring {
				t.measuring = w.startsMeasured(last.Sub(w.start))
			}
			if w.totalOps > 0 && t.measuring {
				if claims == 0 {
					if claims = w.claimOps(); claims == 0 {
						return
					}
				}
				claims--
			}
		}
		select {
		case <-stop:
			return
		default:
		}
		op := w.pickOp(t.rng)
		began, err := w.do(opCtx, t, buf, op)
		ended := time.Now()
		last = ended
		if err != nil && ctx.Err() != nil {
			return // cut short by the stop: neither a success nor a failure
		}
		if op == opInsert && w.keys != nil && w.keys.latest != nil {
			w.keys.latest.ack(insertedID(buf))
		}
		elapsed := ended.Sub(w.start)
		if sec := int(elapsed / time.Second); sec != t.sec {
			w.series.flush(t, sec)
		}
		if err != nil {
			w.first.record(err) // before counting it, so the watcher never sees a failure without its error
		} else {
			t.lastOK = elapsed
		}
		if w.sched == nil {
			t.record(op, ended.Sub(began), err)
			if w.pastEnd(elapsed) {
				return
			}
			continue
		}
		// Coordinated omission: an operation that could not be sent when due
		// because the thread was still waiting for the server counts from
		// when it was due; one the thread waited for counts from its send
		// (how late the thread woke is the lateness, reported apart).
		from := began
		if !claimed.Before(due) {
			from = due
		}
		t.recordScheduled(op, ended.Sub(from), ended.Sub(began), began.Sub(due), err)
	}
}

// record counts one finished operation: the measurement path, kept free of
// locks and allocations. An operation of the warm-up counts in the series
// only.
func (t *workloadThread) record(op opKind, took time.Duration, err error) {
	if err != nil {
		if t.measuring {
			t.errs[op]++
		}
		t.secErrs[op]++
		t.failed.Add(1)
	} else {
		if t.measuring {
			recordLatency(t.hists[op], took)
		}
		recordLatency(t.secHists[op], took)
		t.secCounts[op]++
	}
	if !t.measuring {
		t.warmOps++
	}
	t.done.Add(1)
}

// pickOp draws the next operation from the mix.
func (w *workloadRun) pickOp(r *rand.PCG) opKind {
	u := unitFloat(r.Uint64())
	op := opRead
	for u >= w.below[op] {
		op++
	}
	return op
}

// do prepares and issues one operation, returning when it started (after
// the preparation) and how it ended.
func (w *workloadRun) do(ctx context.Context, t *workloadThread, b *opBuffers, op opKind) (time.Time, error) {
	if op > opInsert {
		return w.doMore(ctx, t, b, op)
	}
	switch op {
	case opRead:
		id := w.keys.pick(t.rng)
		setFilterID(b.filter, id)
		began := time.Now()
		err := w.coll.FindOne(ctx, b.filterArg).Err()
		if err != nil {
			if errors.Is(err, mongo.ErrNoDocuments) {
				err = errNoSuchDocument
			}
			return began, fmt.Errorf("read _id %d: %w", id, err)
		}
		return began, nil
	case opUpdate:
		id := w.prepareUpdate(t, b)
		began := time.Now()
		if err := w.updateOne(ctx, b); err != nil {
			return began, fmt.Errorf("update _id %d: %w", id, err)
		}
		return began, nil
	default:
		id := w.nextInsert.Add(1) - 1
		setFilterID(b.insert, id) // _id sits where it sits in a filter
		t.pad.fill(b.insert[padDocOverhead-1 : padDocOverhead-1+w.padLen])
		if d := w.spec.Date; d != nil {
			setDocDate(b.insert, d.pick(t.pad.next()))
		}
		began := time.Now()
		if _, err := w.coll.InsertOne(ctx, b.insertArg); err != nil {
			return began, fmt.Errorf("insert _id %d: %w", id, err)
		}
		return began, nil
	}
}
