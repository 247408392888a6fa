package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/workload"
	"wtd/internal/testbin"
)

// downTarget is a server a test brings down, and how to signal its process.
type downTarget struct {
	s   *Server
	pid int
}

// startedTarget starts a server through the run (mongod.start).
func startedTarget(t *testing.T, r *Run) downTarget {
	t.Helper()
	s, err := r.StartServer(context.Background(), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return downTarget{s: s, pid: s.PID()}
}

// attachedTarget starts minimongod outside the run and attaches to it
// (mongod.connect): wtd cannot wait for its process.
func attachedTarget(t *testing.T, r *Run) downTarget {
	t.Helper()
	srv := testbin.StartMinimongod(t, 0)
	s, err := r.ConnectServer(context.Background(), srv.URI, 0)
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.Cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // a frozen one must die at the end
	return downTarget{s: s, pid: pid}
}

// signalWhenBusy sends sig to pid once the workload has reported
// progress and has run for at least 2 s (from began), and returns when it
// did so; zero time if the workload never got there within 30 s.
func signalWhenBusy(t *testing.T, pid int, sig syscall.Signal, began time.Time, done *atomic.Int64) time.Time {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if done.Load() > 0 && time.Since(began) >= 2*time.Second {
			at := time.Now()
			if err := syscall.Kill(pid, sig); err != nil {
				t.Errorf("signal %d to %d: %v", sig, pid, err)
			}
			return at
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the workload made no progress within 30 s (%d ops)", done.Load())
	return time.Time{}
}

// TestWorkloadStepFailsWhenItsServerGoesDown: a workload step whose server
// dies (kill -9 of a server wtd started, or of one it attached to) or
// freezes (SIGSTOP) stops soon after, is recorded failed with a reason
// that says how and when, and its figures cover only the time the server
// was up; its provenance gives the reason it has no verdict.
func TestWorkloadStepFailsWhenItsServerGoesDown(t *testing.T) {
	cases := []struct {
		name   string
		target func(*testing.T, *Run) downTarget
		sig    syscall.Signal
		want   []string
		// stopsWithin bounds how long after the signal the step ends.
		stopsWithin time.Duration
	}{
		{"started server killed", startedTarget, syscall.SIGKILL,
			[]string{"server m1 exited (killed by signal 9, SIGKILL) ", " s into the step"}, 5 * time.Second},
		{"attached server killed", attachedTarget, syscall.SIGKILL,
			[]string{"server m1 stopped answering ", " s into the step", "nothing listens on its port", "connection refused"}, 6 * time.Second},
		{"attached server frozen", attachedTarget, syscall.SIGSTOP,
			[]string{"server m1 stopped answering ", " s into the step", "no reply to ping for"}, UnansweredWindow + 6*time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			r, _, _ := newTestRun(t, 0)
			target := c.target(t, r)
			s := target.s
			if _, err := s.Load(ctx, workload.LoadSpec{NS: "d.c", Docs: 20000, DocBytes: 200}, nil); err != nil {
				t.Fatal(err)
			}
			spec := workload.Spec{NS: "d.c", Duration: 8 * time.Second, Threads: 4, Mix: workload.Mix{Read: 1, Update: 1}, KeySpace: 20000, DocBytes: 200}
			if c.sig == syscall.SIGSTOP {
				spec.Duration = 30 * time.Second // it must end by the watch, not by its length
			}
			var done atomic.Int64
			type outcome struct {
				rec record.StepRecord
				err error
			}
			began := make(chan time.Time, 1)
			out := make(chan outcome, 1)
			go func() {
				rec, err := r.Step(ctx, StepSpec{Name: "work", Server: s}, func(ctx context.Context) (any, error) {
					began <- time.Now()
					res, err := s.Workload(ctx, spec, func(d, _ int64) { done.Store(d) })
					return res, err
				})
				out <- outcome{rec, err}
			}()
			start := <-began
			hit := signalWhenBusy(t, target.pid, c.sig, start, &done)
			if hit.IsZero() {
				return
			}
			var o outcome
			select {
			case o = <-out:
			case <-time.After(c.stopsWithin + 30*time.Second):
				t.Fatalf("the step still runs %s after signal %d to its server", time.Since(hit).Round(time.Second), c.sig)
			}
			if took := o.rec.End.Sub(hit); took > c.stopsWithin {
				t.Errorf("the step ended %s after the signal, want within %s", took, c.stopsWithin)
			}
			if o.rec.Status != record.StatusFailed || o.err == nil {
				t.Fatalf("step status %s, error %v; want failed", o.rec.Status, o.err)
			}
			for _, w := range c.want {
				if !strings.Contains(o.rec.Error, w) {
					t.Errorf("step error %q\nlacks %q", o.rec.Error, w)
				}
			}
			var down *ServerDownError
			if !errors.As(o.err, &down) || down.Server != "m1" {
				t.Errorf("step error %v: not a *ServerDownError of m1", o.err)
			}
			res, ok := o.rec.Result.(workload.Result)
			if !ok {
				t.Fatalf("step result %T, want the workload's", o.rec.Result)
			}
			checkCutAtDeath(t, res, hit.Sub(start))
			p := o.rec.Provenance
			if p == nil || p.Reason == "" || p.Verdict != record.VerdictUnknown {
				t.Errorf("provenance %+v: want verdict unknown with a reason", p)
			}
		})
	}
}

// checkCutAtDeath checks that a workload's figures cover the time before
// its server went down, upTo after the workload began (at most).
func checkCutAtDeath(t *testing.T, res workload.Result, upTo time.Duration) {
	t.Helper()
	const margin = 500 * time.Millisecond
	if res.Elapsed > upTo+margin || res.Elapsed < time.Second {
		t.Errorf("elapsed %s, want the time until the server went down (at most %s)", res.Elapsed, upTo+margin)
	}
	if res.Total.Count == 0 {
		t.Fatalf("no operation counted: %+v", res.Total)
	}
	if want := float64(res.Total.Count) / res.Elapsed.Seconds(); math.Abs(res.Total.OpsPerSec-want) > want*0.01 {
		t.Errorf("ops/s %.0f, want %d ops / %s = %.0f", res.Total.OpsPerSec, res.Total.Count, res.Elapsed, want)
	}
	last := int((upTo + margin) / time.Second)
	for _, p := range res.Series {
		for op, n := range p.Counts {
			if p.Second > last && n > 0 {
				t.Errorf("series second %d (after the server went down by second %d) counts %d %s", p.Second, last, n, op)
			}
		}
	}
}

// TestLoadStepFailsWhenItsServerIsKilled: kill -9 during a load in a step
// stops the load at once with the reason; its figures end at the death.
func TestLoadStepFailsWhenItsServerIsKilled(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	target := startedTarget(t, r)
	s := target.s
	// Far more than the 2 s before the kill: the load must not end first.
	spec := workload.LoadSpec{NS: "d.c", Docs: 20_000_000, DocBytes: 200, Threads: 2}
	var done atomic.Int64
	began := make(chan time.Time, 1)
	type outcome struct {
		rec record.StepRecord
		err error
	}
	out := make(chan outcome, 1)
	go func() {
		rec, err := r.Step(ctx, StepSpec{Name: "load", Server: s}, func(ctx context.Context) (any, error) {
			began <- time.Now()
			res, err := s.Load(ctx, spec, func(d, _ int64) { done.Store(d) })
			return res, err
		})
		out <- outcome{rec, err}
	}()
	start := <-began
	hit := signalWhenBusy(t, target.pid, syscall.SIGKILL, start, &done)
	if hit.IsZero() {
		return
	}
	var o outcome
	select {
	case o = <-out:
	case <-time.After(30 * time.Second):
		t.Fatal("the load step still runs 30 s after its server was killed")
	}
	if o.rec.Status != record.StatusFailed || !strings.Contains(o.rec.Error, "server m1 exited (killed by signal 9, SIGKILL) ") {
		t.Fatalf("step %s %q, want failed because m1 was killed", o.rec.Status, o.rec.Error)
	}
	var down *ServerDownError
	if !errors.As(o.err, &down) {
		t.Errorf("step error %v: not a *ServerDownError", o.err)
	}
	res, ok := o.rec.Result.(workload.LoadResult)
	if !ok {
		t.Fatalf("step result %T, want the load's", o.rec.Result)
	}
	if upTo := hit.Sub(start) + 500*time.Millisecond; res.Elapsed > upTo || res.Docs == 0 {
		t.Errorf("load elapsed %s with %d docs, want > 0 docs within the %s before the kill", res.Elapsed, res.Docs, upTo)
	}
	if want := float64(res.Docs) / res.Elapsed.Seconds(); math.Abs(res.DocsPerSec-want) > want*0.01 {
		t.Errorf("docs/s %.0f, want %d docs / %s = %.0f", res.DocsPerSec, res.Docs, res.Elapsed, want)
	}
	if p := o.rec.Provenance; p == nil || p.Reason == "" {
		t.Errorf("provenance %+v: want the reason it has no verdict", p)
	}
}

// TestStepFailsWhenItsServerDies: a step whose server dies fails even when
// its function does not notice (it touches no server), and so does the
// next one (its server died before it); both keep what their function
// returned and say why there is no verdict.
func TestStepFailsWhenItsServerDies(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	target := startedTarget(t, r)
	if _, err := target.s.Load(ctx, workload.LoadSpec{NS: "d.c", Docs: 1000, DocBytes: 200}, nil); err != nil {
		t.Fatal(err)
	}
	reaped := func() bool { return target.s.crashed() != nil }
	cases := []struct {
		name string
		fn   func(ctx context.Context) (any, error)
		want string
	}{
		{"dies during", func(context.Context) (any, error) {
			if err := syscall.Kill(target.pid, syscall.SIGKILL); err != nil {
				return nil, err
			}
			for deadline := time.Now().Add(10 * time.Second); !reaped() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			return "fine", nil
		}, " s into the step"},
		{"died before", func(context.Context) (any, error) { return "fine", nil }, " s before the step"},
	}
	for _, c := range cases {
		rec, err := r.Step(ctx, StepSpec{Name: c.name, Server: target.s}, c.fn)
		if err == nil || rec.Status != record.StatusFailed {
			t.Errorf("%s: step %s, error %v; want failed", c.name, rec.Status, err)
		}
		for _, w := range []string{"server m1 exited (killed by signal 9, SIGKILL) ", c.want} {
			if !strings.Contains(rec.Error, w) {
				t.Errorf("%s: step error %q lacks %q", c.name, rec.Error, w)
			}
		}
		if rec.Result != "fine" {
			t.Errorf("%s: step result %v, want what the function returned", c.name, rec.Result)
		}
		if p := rec.Provenance; p != nil && (p.Reason == "" || p.Verdict != record.VerdictUnknown) {
			t.Errorf("%s: provenance verdict %q reason %q, want unknown with a reason", c.name, p.Verdict, p.Reason)
		}
	}
}

// TestStepSurvivesRestartAndStopByWtd: a server that wtd itself restarts
// or stops inside a step is not taken for dead; the step whose server was
// stopped says why it has no verdict.
func TestStepSurvivesRestartAndStopByWtd(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	s := startedTarget(t, r).s
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "d.c", Docs: 1000, DocBytes: 200}, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Step(ctx, StepSpec{Name: "restart", Server: s}, func(ctx context.Context) (any, error) {
		if err := s.Restart(ctx, ServerChanges{}); err != nil {
			return nil, err
		}
		return s.Workload(ctx, workload.Spec{NS: "d.c", Ops: 2000, Mix: workload.Mix{Read: 1}, KeySpace: 1000}, nil)
	})
	if err != nil || rec.Status != record.StatusOK {
		t.Errorf("step with a restart: %s, %v; want ok", rec.Status, err)
	}
	if p := rec.Provenance; p == nil || p.Verdict == "" || p.Reason == "" {
		t.Errorf("step with a restart: provenance %+v, want a verdict with its reason", p)
	}
	rec, err = r.Step(ctx, StepSpec{Name: "stop", Server: s}, func(ctx context.Context) (any, error) {
		return nil, s.Stop(ctx)
	})
	if err != nil || rec.Status != record.StatusOK {
		t.Errorf("step with a stop: %s, %v; want ok", rec.Status, err)
	}
	if p := rec.Provenance; p == nil || p.Verdict != record.VerdictUnknown || !strings.Contains(p.Reason, "m1 was stopped during it") {
		t.Errorf("step with a stop: provenance %+v, want unknown because m1 was stopped", p)
	}
}
