package engine

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"wtd/engine/workload"
)

// TestWorkloadAbortReachesAHungServer: cancelling a workload ends the
// operations in flight even when the server stopped answering (SIGSTOP):
// Ctrl-C must not wait for a server that never replies.
func TestWorkloadAbortReachesAHungServer(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	s, err := r.StartServer(ctx, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "h.c", Docs: 1000, DocBytes: 200}, nil); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type outcome struct {
		res workload.Result
		err error
	}
	done := make(chan outcome, 1)
	reports := make(chan int64, 1000) // progress, every 250 ms
	progress := func(n, _ int64) {
		select {
		case reports <- n:
		default:
		}
	}
	go func() {
		res, err := s.Workload(wctx, workload.Spec{NS: "h.c", Duration: 60 * time.Second, Threads: 3, Mix: workload.Mix{Read: 1}, KeySpace: 1000}, progress)
		done <- outcome{res, err}
	}()
	next := func(what string) int64 {
		select {
		case n := <-reports:
			return n
		case o := <-done:
			t.Fatalf("the workload ended while the test waited for %s: %v", what, o.err)
		case <-time.After(30 * time.Second):
			t.Fatalf("no progress report for 30 s while the test waited for %s", what)
		}
		return 0
	}
	for next("the first operations") == 0 {
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	// Two reports alike: for 250 ms no operation ended, every thread
	// waits for the stopped server.
	for prev, n := int64(-1), next("the threads to hang"); n != prev; prev, n = n, next("the threads to hang") {
	}
	stop := errors.New("stopped by the test")
	cancelled := time.Now()
	cancel(stop)
	select {
	case o := <-done:
		if took := time.Since(cancelled); took > 3*time.Second {
			t.Errorf("the workload ended %s after the cancel", took)
		}
		if !errors.Is(o.err, stop) {
			t.Errorf("error %v, want the cancel's cause", o.err)
		}
		if o.res.Total.Count == 0 {
			t.Errorf("no operations counted before the stop: %+v", o.res.Total)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the workload still waits for a stopped server 15 s after the cancel")
	}
}
