package server

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// maxOpCommandBytes is how much of a command currentOp shows; longer
// commands are shown as {$truncated: "..."}, as mongod does.
const maxOpCommandBytes = 1024

// operation is one in-flight operation: a client command or a TTL pass.
// Fields other than the atomics are set before the operation is registered
// and not changed after, except held and admitted, which only the owning
// goroutine touches.
type operation struct {
	id      int32
	desc    string // "conn12", "TTLMonitor"
	connID  int64
	client  string
	opType  string // query, getmore, insert, update, remove, command
	ns      string
	command bsoncore.Document // valid while registered
	start   time.Time

	queued   atomic.Int32 // ticketKind+1 while waiting for a ticket, else 0
	killed   atomic.Bool
	killCh   chan struct{}
	killOnce sync.Once

	// What the operation's executors examined and returned, and their
	// plan (owner only; the profiler and slow query log read them).
	keysExamined, docsExamined, nreturned int64
	planSummary                           string

	held     [2]int // ticket depth per kind (owner only)
	admitted bool   // has had a ticket (owner only)
	ticketAt [2]time.Time
}

// queuedFor returns the function a ticket pool calls when op starts
// (true) and stops (false) waiting for a ticket of kind k, so currentOp
// can show it.
func (op *operation) queuedFor(k ticketKind) func(bool) {
	return func(q bool) {
		if q {
			op.queued.Store(int32(k) + 1)
		} else {
			op.queued.Store(0)
		}
	}
}

// kill interrupts the operation: a queued one stops waiting, a running
// scan stops at its next check.
func (op *operation) kill() {
	op.killOnce.Do(func() {
		op.killed.Store(true)
		close(op.killCh)
	})
}

// interrupted returns Interrupted once the operation has been killed.
func (op *operation) interrupted() error {
	if op != nil && op.killed.Load() {
		return errInterrupted()
	}
	return nil
}

// opRegistry is the set of in-flight operations, by opid.
type opRegistry struct {
	mu  sync.Mutex
	seq atomic.Int32
	m   map[int32]*operation
}

func (r *opRegistry) init() { r.m = map[int32]*operation{} }

// begin registers a new operation.
func (r *opRegistry) begin(op *operation) *operation {
	op.id = r.seq.Add(1)
	op.start = time.Now()
	op.killCh = make(chan struct{})
	r.mu.Lock()
	r.m[op.id] = op
	r.mu.Unlock()
	return op
}

// end unregisters op.
func (r *opRegistry) end(op *operation) {
	r.mu.Lock()
	delete(r.m, op.id)
	r.mu.Unlock()
}

// kill interrupts the operation with opid id; false when there is none.
func (r *opRegistry) kill(id int32) bool {
	r.mu.Lock()
	op := r.m[id]
	r.mu.Unlock()
	if op == nil {
		return false
	}
	op.kill()
	return true
}

// each calls f for every operation in opid order, under the registry
// lock, so the operations' command documents stay valid.
func (r *opRegistry) each(f func(op *operation)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]int32, 0, len(r.m))
	for id := range r.m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		f(r.m[id])
	}
}

// opTypes maps command names to currentOp's op field.
var opTypes = map[string]string{"find": "query", "getMore": "getmore", "insert": "insert",
	"update": "update", "delete": "remove"}

// appendDoc appends the currentOp entry of op as of now.
func (op *operation) appendDoc(dst []byte, now time.Time) []byte {
	run := now.Sub(op.start)
	queued := op.queued.Load()
	d := bsoncore.AppendStringElement(dst, "type", "op")
	d = bsoncore.AppendStringElement(d, "host", hostname())
	d = bsoncore.AppendStringElement(d, "desc", op.desc)
	if op.connID != 0 {
		d = bsoncore.AppendInt64Element(d, "connectionId", op.connID)
		d = bsoncore.AppendStringElement(d, "client", op.client)
	}
	d = bsoncore.AppendBooleanElement(d, "active", true)
	d = appendDate(d, "currentOpTime", now)
	d = bsoncore.AppendInt32Element(d, "opid", op.id)
	d = bsoncore.AppendInt64Element(d, "secs_running", int64(run.Seconds()))
	d = bsoncore.AppendInt64Element(d, "microsecs_running", run.Microseconds())
	d = bsoncore.AppendStringElement(d, "op", op.opType)
	d = bsoncore.AppendStringElement(d, "ns", op.ns)
	d = appendOpCommand(d, op.command)
	d = bsoncore.AppendInt32Element(d, "numYields", 0)
	// Ticket acquisition is part of mongod's global lock acquisition, so a
	// queued operation is waiting for a lock.
	d = bsoncore.AppendBooleanElement(d, "waitingForLock", queued != 0)
	d = bsoncore.AppendBooleanElement(d, "waitingForTicket", queued != 0)
	if queued != 0 {
		d = bsoncore.AppendStringElement(d, "ticketQueue", ticketKind(queued-1).String())
	}
	return bsoncore.AppendBooleanElement(d, "killPending", op.killed.Load())
}

func appendOpCommand(d []byte, cmd bsoncore.Document) []byte {
	if cmd == nil {
		return bsoncore.AppendDocumentElement(d, "command", bsoncore.NewDocumentBuilder().Build())
	}
	if len(cmd) <= maxOpCommandBytes {
		return bsoncore.AppendDocumentElement(d, "command", cmd)
	}
	s := cmd.String()
	if len(s) > maxOpCommandBytes {
		s = s[:maxOpCommandBytes]
	}
	idx, dd := bsoncore.AppendDocumentElementStart(d, "command")
	dd = bsoncore.AppendStringElement(dd, "$truncated", s)
	dd, _ = bsoncore.AppendDocumentEnd(dd, idx)
	return dd
}

// appendIdleConn appends the currentOp entry of a connection with no
// operation in flight.
func appendIdleConn(dst []byte, c *clientConn) []byte {
	d := bsoncore.AppendStringElement(dst, "type", "op")
	d = bsoncore.AppendStringElement(d, "host", hostname())
	d = bsoncore.AppendStringElement(d, "desc", c.ctxName())
	d = bsoncore.AppendInt64Element(d, "connectionId", c.id)
	d = bsoncore.AppendStringElement(d, "client", c.remote)
	return bsoncore.AppendBooleanElement(d, "active", false)
}
