package itest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ticketTestDocs make a slow read of the ticket tests take 40-60 ms alone
// on the 2-core test machine, and over 100 ms with five or ten at once:
// several times a serverStatus or setParameter, which a busy machine
// slows down alike.
const ticketTestDocs = slowDocs / 8

// readersTimeout bounds a ticket test's readers: they all end well within
// it on a busy machine unless a ticket is never handed over.
const readersTimeout = 60 * time.Second

// readers are slow reads running at once. Each has a deadline past
// readersTimeout, so that the test's own deadline, with its message, comes
// first.
type readers struct {
	done chan struct{} // closed when every read has returned
	errs []error
}

// startReaders starts n slow reads of t.slow at once, on a client of
// their own whose n connections are open before the reads start (the
// harness's client gives up on a connection after 2 s, and opens two at
// a time).
func startReaders(t *testing.T, s *server, n int) *readers {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(s.uri()).SetMaxConnecting(uint64(n)).SetMinPoolSize(uint64(n)))
	noErr(t, err)
	t.Cleanup(func() { s.disconnect(c) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pings := make([]error, n)
	var warm sync.WaitGroup
	for i := range n {
		warm.Add(1)
		go func() {
			defer warm.Done()
			pings[i] = c.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		}()
	}
	warm.Wait()
	if err := errors.Join(pings...); err != nil {
		t.Fatalf("open %d connections: %v", n, err)
	}
	r := &readers{done: make(chan struct{}), errs: make([]error, n)}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), readersTimeout+30*time.Second)
			defer cancel()
			r.errs[i] = c.Database("t").RunCommand(ctx, bson.D{{Key: "count", Value: "slow"}, {Key: "query", Value: slowQuery}}).Err()
		}()
	}
	go func() { wg.Wait(); close(r.done) }()
	return r
}

// finished reports whether every read has returned, failing the test at
// once when one failed.
func (r *readers) finished(t *testing.T) bool {
	t.Helper()
	select {
	case <-r.done:
	default:
		return false
	}
	if err := errors.Join(r.errs...); err != nil {
		t.Fatalf("slow reads: %v", err)
	}
	return true
}

// readQueue is the read ticket pool in one serverStatus (one consistent
// reading of the pool).
type readQueue struct{ out, total, queued, started, finished int64 }

func readQueueStatus(t *testing.T, s *server) readQueue {
	t.Helper()
	st := must(status(s))(t)
	const p = "queues.execution.read."
	q := readQueue{out: num(st, p+"out"), total: num(st, p+"totalTickets"), queued: num(st, p+"normalPriority.queueLength"),
		started: num(st, p+"normalPriority.startedProcessing"), finished: num(st, p+"normalPriority.finishedProcessing")}
	if q.out < 0 || q.total < 0 || q.queued < 0 || q.started < 0 || q.finished < 0 {
		t.Fatalf("serverStatus queues.execution.read lacks a counter: %v", field(st, "queues.execution.read"))
	}
	return q
}

// waitReadQueue polls serverStatus until ok holds for the read pool, and
// fails the test when it does not within 30 s or the reads end first.
func waitReadQueue(t *testing.T, s *server, r *readers, what string, ok func(readQueue) bool) readQueue {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		q := readQueueStatus(t, s)
		if ok(q) {
			return q
		}
		if r.finished(t) {
			t.Fatalf("the reads ended before %s: %+v", what, q)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30s: %+v", what, q)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Raising the read tickets while reads queue admits the queued ones at
// once, not when a running read ends: 20 slow reads queue behind 5
// tickets; right after the raise to 20 none is queued and more than 5
// run.
func TestRaisingReadTicketsAdmitsQueuedReads(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "executionControlConcurrentReadTransactions=5")
	loadSlowCollection(t, s, "t", "slow", ticketTestDocs)
	started := time.Now()
	r := startReaders(t, s, 20)
	before := waitReadQueue(t, s, r, "5 reads running and 10 queued", func(q readQueue) bool { return q.out == 5 && q.queued >= 10 })
	setParam(t, s, "executionControlConcurrentReadTransactions", 20)
	after := readQueueStatus(t, s)
	// A read holds its ticket for the whole scan (a second or more here,
	// 20 reads sharing the CPU): the queued reads, at least 10, now run.
	if after.total != 20 || after.queued != 0 || after.out < 10 {
		t.Errorf("right after raising 5 read tickets to 20 while %d reads queued: %+v, want 20 tickets, none queued, at least 10 out",
			before.queued, after)
	}
	waitReaders(t, r)
	t.Logf("20 reads in %v", time.Since(started))
}

// Lowering the read tickets while reads queue caps the reads running at
// the new number: the reads holding a ticket keep it, and a queued read
// is admitted only when fewer than the new number run. 20 slow reads
// queue behind 10 tickets, lowered to 5: from the first read admitted
// after that, at most 5 run, and 5 do while some still queue.
func TestLoweringReadTicketsCapsRunningReads(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "executionControlConcurrentReadTransactions=10")
	loadSlowCollection(t, s, "t", "slow", ticketTestDocs)
	started := time.Now()
	r := startReaders(t, s, 20)
	waitReadQueue(t, s, r, "10 reads running and some queued", func(q readQueue) bool { return q.out == 10 && q.queued > 0 })
	setParam(t, s, "executionControlConcurrentReadTransactions", 5)
	lowered := readQueueStatus(t, s)
	if lowered.total != 5 {
		t.Fatalf("after lowering to 5: %+v", lowered)
	}
	var fullWhileQueued bool // 5 out with reads still queued
	deadline := time.Now().Add(readersTimeout)
	for !r.finished(t) {
		if time.Now().After(deadline) {
			t.Fatalf("reads still running %v after lowering the tickets: %+v", readersTimeout, readQueueStatus(t, s))
		}
		q := readQueueStatus(t, s)
		if admitted := q.started - lowered.started; admitted > 0 && q.out > 5 {
			t.Fatalf("%d reads admitted since lowering the tickets to 5, and %d running: %+v", admitted, q.out, q)
		}
		if q.out > lowered.out {
			t.Fatalf("%d reads running, more than the %d when the tickets were lowered: %+v", q.out, lowered.out, q)
		}
		fullWhileQueued = fullWhileQueued || (q.out == 5 && q.queued > 0)
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("20 reads in %v", time.Since(started))
	if !fullWhileQueued {
		t.Errorf("never 5 reads running while others queued, after lowering 10 read tickets to 5")
	}
	if q := readQueueStatus(t, s); q.out != 0 || q.queued != 0 || q.finished-lowered.finished < 10 {
		t.Errorf("after the reads: %+v (at the lowering %+v)", q, lowered)
	}
}

// waitReaders waits for every read to end, failing the test when they
// have not within readersTimeout.
func waitReaders(t *testing.T, r *readers) {
	t.Helper()
	select {
	case <-r.done:
		r.finished(t)
	case <-time.After(readersTimeout):
		t.Fatalf("slow reads still running after %v", readersTimeout)
	}
}
