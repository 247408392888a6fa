package luabind

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/workload"
)

// TestWorkloadWhoseServerDiesFailsItsStep: kill -9 of the server during
// m:workload in a step{} raises an error saying so, fails the step with
// that reason, and the step keeps the workload's figures up to the death.
func TestWorkloadWhoseServerDiesFailsItsStep(t *testing.T) {
	tr := newTestRun(t, withServer(t))
	var mu sync.Mutex
	var firstProgress time.Time
	var done int64
	env := tr.env(nil)
	env.Progress = func(label string, d, total int64, _ time.Duration) {
		if label != "workload d.c" || total < 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if firstProgress.IsZero() {
			firstProgress = time.Now()
		}
		done = d
	}
	src := `local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "d.c", docs = 20000, doc_bytes = 200 }
step{ name = "work", server = m, run = function()
  return m:workload{ ns = "d.c", duration = 8, threads = 4, mix = { read = 1, update = 1 } }
end }
log("not reached")
`
	errc := make(chan error, 1)
	go func() {
		_, err := RunPlaybook(context.Background(), "dies.lua", src, env)
		errc <- err
	}()
	// Kill once the workload has run 2 s and made progress.
	var hit, first time.Time
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && hit.IsZero(); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		first = firstProgress
		busy := !first.IsZero() && done > 0 && time.Since(first) >= 2*time.Second
		mu.Unlock()
		if busy {
			hit = time.Now()
			if err := syscall.Kill(tr.run.Servers()[0].PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if hit.IsZero() {
		t.Fatal("the workload made no progress within 60 s")
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("the playbook still runs 30 s after the kill")
	}
	wantContains(t, err, "dies.lua:4:", "server m1 exited (killed by signal 9, SIGKILL)")
	steps := tr.run.Steps()
	if len(steps) != 1 {
		t.Fatalf("%d steps, want 1", len(steps))
	}
	st := steps[0]
	if st.Status != record.StatusFailed || !strings.Contains(st.Error, "server m1 exited (killed by signal 9, SIGKILL) ") || !strings.Contains(st.Error, " s into the step") {
		t.Errorf("step %s %q, want failed because m1 was killed", st.Status, st.Error)
	}
	res, ok := st.Result.(workload.Result)
	if !ok {
		t.Fatalf("step result %T, want the workload's figures", st.Result)
	}
	// The first progress report comes 250 ms after the workload's start.
	if upTo := hit.Sub(first) + 750*time.Millisecond; res.Elapsed > upTo || res.Total.Count == 0 {
		t.Errorf("workload elapsed %s with %d ops, want > 0 ops within the %s before the kill", res.Elapsed, res.Total.Count, upTo)
	}
	if strings.Contains(tr.log.String(), "not reached") {
		t.Error("the playbook went on after the failed step")
	}
}
