package server

import (
	"errors"
	"testing"
	"time"

	"wtd/minimongod/mongoerr"
)

func noQueue(bool) {}

// acquireAsync starts an acquisition and returns its result channel.
func acquireAsync(h *ticketHolder, killed chan struct{}) chan error {
	ch := make(chan error, 1)
	go func() { ch <- h.acquire(killed, true, noQueue) }()
	return ch
}

// waitQueued waits until n operations are queued on h.
func waitQueued(t *testing.T, h *ticketHolder, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.snapshot().queued != n {
		if time.Now().After(deadline) {
			t.Fatalf("queued = %d, want %d", h.snapshot().queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTicketHolderQueuesPastLimitInFIFOOrder(t *testing.T) {
	h := newTicketHolder(2)
	for i := 0; i < 2; i++ {
		if err := h.acquire(nil, true, noQueue); err != nil {
			t.Fatal(err)
		}
	}
	first := acquireAsync(h, nil)
	waitQueued(t, h, 1)
	second := acquireAsync(h, nil)
	waitQueued(t, h, 2)
	h.release(time.Millisecond)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case <-second:
		t.Fatal("second waiter admitted before a ticket was free")
	case <-time.After(20 * time.Millisecond):
	}
	snap := h.snapshot()
	if snap.out != 2 || snap.queued != 1 || snap.stats.addedToQueue != 2 || snap.stats.removedFromQueue != 1 {
		t.Errorf("snapshot = %+v", snap)
	}
	h.resize(3)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if snap := h.snapshot(); snap.out != 3 || snap.available() != 0 || snap.stats.totalTimeQueuedMicros <= 0 {
		t.Errorf("after resize: %+v", snap)
	}
}

func TestTicketHolderKillEndsWait(t *testing.T) {
	h := newTicketHolder(1)
	if err := h.acquire(nil, true, noQueue); err != nil {
		t.Fatal(err)
	}
	kill := make(chan struct{})
	res := acquireAsync(h, kill)
	waitQueued(t, h, 1)
	close(kill)
	err := <-res
	var me *mongoerr.Error
	if !errors.As(err, &me) || me.Code != mongoerr.CodeInterrupted || me.Msg != "operation was interrupted" {
		t.Fatalf("err = %v, want Interrupted", err)
	}
	snap := h.snapshot()
	if snap.queued != 0 || snap.out != 1 || snap.stats.canceled != 1 {
		t.Errorf("snapshot = %+v", snap)
	}
}

func TestThroughputProbeMovesWithinBounds(t *testing.T) {
	r, w := newTicketHolder(128), newTicketHolder(128)
	p := newThroughputProbe(2, r, w, 128, 128)
	if r.outof() != 5 || w.outof() != 5 {
		t.Fatalf("initial tickets %d/%d, want 5/5", r.outof(), w.outof())
	}
	now := time.Now()
	p.run(now) // first interval only records
	// Exhaust the read pool: the probe goes up.
	for i := 0; i < 5; i++ {
		r.acquire(nil, true, noQueue)
	}
	now = now.Add(100 * time.Millisecond)
	p.run(now)
	if p.state != probeUp || r.outof() != 6 {
		t.Fatalf("after exhaustion: state %v, read tickets %d, want up and 6", p.state, r.outof())
	}
	// More tickets released per interval than in the stable one: the
	// stable concurrency moves up.
	for i := 0; i < 5; i++ {
		r.release(time.Millisecond)
	}
	now = now.Add(100 * time.Millisecond)
	p.run(now)
	if p.state != probeStable || p.stats.timesIncreased != 1 || p.stableConcurrency <= 10 {
		t.Fatalf("after a better probe: state %v, stats %+v, stable %.2f", p.state, p.stats, p.stableConcurrency)
	}
	// Idle pools at the minimum stay there.
	for i := 0; i < 20; i++ {
		now = now.Add(100 * time.Millisecond)
		p.run(now)
		if n := r.outof(); n < probeMinConcurrency || n > 128 {
			t.Fatalf("read tickets %d outside [5, 128]", n)
		}
	}
}
