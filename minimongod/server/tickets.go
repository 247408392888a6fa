package server

import (
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// ticketKind says which pool an operation draws from.
type ticketKind int

const (
	readTicket ticketKind = iota
	writeTicket
)

func (k ticketKind) String() string {
	if k == writeTicket {
		return "write"
	}
	return "read"
}

// ticketWaiter is one operation queued for a ticket.
type ticketWaiter struct {
	ready   chan struct{} // closed when the ticket is handed over
	granted bool          // under ticketHolder.mu
}

// ticketStats are a pool's counters, as serverStatus'
// queues.execution.<kind>.normalPriority shows them.
type ticketStats struct {
	addedToQueue, removedFromQueue        int64
	startedProcessing, finishedProcessing int64
	totalTimeProcessingMicros             int64
	canceled, newAdmissions               int64
	totalTimeQueuedMicros                 int64
}

// ticketHolder is one pool of execution tickets (mongod's TicketHolder):
// at most total operations hold a ticket; the rest wait in FIFO order.
// Resizing takes effect for queued operations at once.
type ticketHolder struct {
	mu       sync.Mutex
	total    int
	out      int
	peakUsed int // highest out since the last getAndResetPeakUsed
	queue    []*ticketWaiter
	stats    ticketStats
}

func newTicketHolder(total int) *ticketHolder {
	return &ticketHolder{total: total}
}

// errInterrupted is mongod's Interrupted error (killOp).
func errInterrupted() error {
	return mongoerr.New(mongoerr.CodeInterrupted, "operation was interrupted")
}

// acquire takes a ticket, waiting in the queue while none is free, until
// killed is closed (then it fails with Interrupted). firstAdmission says
// whether this is the operation's first ticket (newAdmissions). onQueue is
// called with true when the operation starts waiting and false when it
// stops, so currentOp can show it.
func (h *ticketHolder) acquire(killed <-chan struct{}, firstAdmission bool, onQueue func(bool)) error {
	h.mu.Lock()
	if firstAdmission {
		h.stats.newAdmissions++
	}
	if h.out < h.total && len(h.queue) == 0 {
		h.admitLocked()
		h.mu.Unlock()
		return nil
	}
	w := &ticketWaiter{ready: make(chan struct{})}
	h.queue = append(h.queue, w)
	h.stats.addedToQueue++
	h.mu.Unlock()
	onQueue(true)
	defer onQueue(false)
	start := time.Now()
	select {
	case <-w.ready:
		h.finishWait(start)
		return nil
	case <-killed:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.removedFromQueue++
	h.stats.totalTimeQueuedMicros += time.Since(start).Microseconds()
	if w.granted {
		// The ticket arrived as the kill did: give it back.
		h.out--
		h.stats.finishedProcessing++
		h.grantLocked()
	} else {
		h.removeLocked(w)
	}
	h.stats.canceled++
	return errInterrupted()
}

func (h *ticketHolder) finishWait(start time.Time) {
	h.mu.Lock()
	h.stats.removedFromQueue++
	h.stats.totalTimeQueuedMicros += time.Since(start).Microseconds()
	h.mu.Unlock()
}

// admitLocked hands a ticket to the caller.
func (h *ticketHolder) admitLocked() {
	h.out++
	h.peakUsed = max(h.peakUsed, h.out)
	h.stats.startedProcessing++
}

func (h *ticketHolder) removeLocked(w *ticketWaiter) {
	for i, q := range h.queue {
		if q == w {
			h.queue = append(h.queue[:i], h.queue[i+1:]...)
			return
		}
	}
}

// grantLocked hands free tickets to the head of the queue.
func (h *ticketHolder) grantLocked() {
	for h.out < h.total && len(h.queue) > 0 {
		w := h.queue[0]
		h.queue[0] = nil
		h.queue = h.queue[1:]
		w.granted = true
		h.admitLocked()
		close(w.ready)
	}
}

// release returns a ticket held for held.
func (h *ticketHolder) release(held time.Duration) {
	h.mu.Lock()
	h.out--
	h.stats.finishedProcessing++
	h.stats.totalTimeProcessingMicros += held.Microseconds()
	h.grantLocked()
	h.mu.Unlock()
}

// resize sets the number of tickets; operations already holding one keep
// it when the pool shrinks.
func (h *ticketHolder) resize(total int) {
	h.mu.Lock()
	h.total = total
	h.grantLocked()
	h.mu.Unlock()
}

// outof returns the number of tickets.
func (h *ticketHolder) outof() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// getAndResetPeakUsed returns the highest number of tickets out since the
// last call.
func (h *ticketHolder) getAndResetPeakUsed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.peakUsed
	h.peakUsed = h.out
	return p
}

// finished returns how many tickets have been released.
func (h *ticketHolder) finished() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats.finishedProcessing
}

// ticketSnapshot is a consistent reading of a pool.
type ticketSnapshot struct {
	out, total, queued int
	stats              ticketStats
}

func (h *ticketHolder) snapshot() ticketSnapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ticketSnapshot{out: h.out, total: h.total, queued: len(h.queue), stats: h.stats}
}

func (t ticketSnapshot) available() int { return max(t.total-t.out, 0) }

// appendCounts appends out, available and totalTickets.
func (t ticketSnapshot) appendCounts(d []byte) []byte {
	d = bsoncore.AppendInt32Element(d, "out", int32(t.out))
	d = bsoncore.AppendInt32Element(d, "available", int32(t.available()))
	return bsoncore.AppendInt32Element(d, "totalTickets", int32(t.total))
}

// appendNormalPriority appends the queue counters of mongod's
// queues.execution.<kind>.normalPriority. out, available and totalTickets
// are repeated there, where the ticket-queue experiment reads them.
func (t ticketSnapshot) appendNormalPriority(d []byte) []byte {
	st := t.stats
	d = t.appendCounts(d)
	d = bsoncore.AppendInt64Element(d, "addedToQueue", st.addedToQueue)
	d = bsoncore.AppendInt64Element(d, "removedFromQueue", st.removedFromQueue)
	d = bsoncore.AppendInt64Element(d, "queueLength", int64(t.queued))
	d = bsoncore.AppendInt64Element(d, "startedProcessing", st.startedProcessing)
	d = bsoncore.AppendInt64Element(d, "processing", st.startedProcessing-st.finishedProcessing)
	d = bsoncore.AppendInt64Element(d, "finishedProcessing", st.finishedProcessing)
	d = bsoncore.AppendInt64Element(d, "totalTimeProcessingMicros", st.totalTimeProcessingMicros)
	d = bsoncore.AppendInt64Element(d, "canceled", st.canceled)
	d = bsoncore.AppendInt64Element(d, "newAdmissions", st.newAdmissions)
	return bsoncore.AppendInt64Element(d, "totalTimeQueuedMicros", st.totalTimeQueuedMicros)
}
