package engine

import (
	"context"
	"testing"
	"time"

	"wtd/engine/workload"
)

// TestSweepThreads: each thread count is its own recorded step, labelled,
// and the table is what the steps measured.
func TestSweepThreads(t *testing.T) {
	ctx := context.Background()
	r, s, _ := startLoadedRun(t, "sw.c", 1000)
	res, err := r.SweepThreads(ctx, s, workload.Spec{NS: "sw.c", Mix: workload.Mix{Read: 3, Insert: 1}, KeySpace: 1000, DocBytes: 256},
		SweepOptions{Threads: []int{1, 2, 4}, Duration: 400 * time.Millisecond, Labels: map[string]any{"mix": "r3i1"}})
	if err != nil {
		t.Fatal(err)
	}
	steps := r.Steps()
	if len(steps) != 3 || len(res.Points) != 3 {
		t.Fatalf("%d steps, %d points", len(steps), len(res.Points))
	}
	for i, st := range steps {
		wr := st.Result.(workload.Result)
		p := res.Points[i]
		if st.Name != "threads" || st.Labels["threads"] != p.Threads || st.Labels["mix"] != "r3i1" ||
			p.OpsPerSec != wr.Total.OpsPerSec || p.P99Micros != wr.Total.P99Micros || p.OpsPerSec <= 0 {
			t.Errorf("step %d %s %v: point %+v, result total %+v", i, st.Name, st.Labels, p, wr.Total)
		}
		if wr.Ops[workload.OpInsert].Errors != 0 {
			t.Errorf("step %d: %d insert errors: the inserts must go on from the last step's", i, wr.Ops[workload.OpInsert].Errors)
		}
	}
	knee, ok, reason, _ := workload.Knee(res.Points)
	if ok != (res.Knee != nil) || (ok && *res.Knee != knee) || res.Reason != reason || reason == "" {
		t.Errorf("sweep knee %v %q, the rule says %d %v %q", res.Knee, res.Reason, knee, ok, reason)
	}
}
