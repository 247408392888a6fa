package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"wtd/engine/workload"
)

// startLoadedRun starts a run and a server of it with docs documents of
// 256 bytes in ns; it returns the run's event log too.
func startLoadedRun(t *testing.T, ns string, docs int64) (*Run, *Server, *bytes.Buffer) {
	t.Helper()
	r, _, log := newTestRun(t, 0)
	s, err := r.StartServer(context.Background(), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(context.Background(), workload.LoadSpec{NS: ns, Docs: docs, DocBytes: 256}, nil); err != nil {
		t.Fatal(err)
	}
	return r, s, log
}

// TestStepRecordsWarmup: the step records the warm-up its workload had,
// over a label's word.
func TestStepRecordsWarmup(t *testing.T) {
	ctx := context.Background()
	r, s, _ := startLoadedRun(t, "wu.c", 1000)
	rec, err := r.Step(ctx, StepSpec{Name: "warm", Labels: map[string]any{"warmup": "label"}}, func(ctx context.Context) (any, error) {
		return s.Workload(ctx, workload.Spec{NS: "wu.c", Ops: 100, WarmupOps: 50, Mix: workload.Mix{Read: 1}, KeySpace: 1000}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Provenance.Warmup; !strings.HasPrefix(got, "50 ops (") || !strings.Contains(got, "50 operations) run first and left out of the summary") {
		t.Errorf("provenance warm-up %q", got)
	}
}

// TestWorkloadStatusAndWatch: a workload run through its server says how it
// goes every status interval, and watched serverStatus fields come back
// with their values before, during and after.
func TestWorkloadStatusAndWatch(t *testing.T) {
	old := statusInterval
	statusInterval = 400 * time.Millisecond
	defer func() { statusInterval = old }()
	ctx := context.Background()
	_, s, log := startLoadedRun(t, "st.c", 1000)
	res, err := s.Workload(ctx, workload.Spec{NS: "st.c", Duration: 2500 * time.Millisecond, Threads: 2, Mix: workload.Mix{Read: 1}, KeySpace: 1000,
		Watch: []string{"opcounters.query", "connections.current"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines, withP99 := 0, 0
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "workload st.c: ") && strings.Contains(l, " ops/s, p99 ") && strings.HasSuffix(l, " so far") {
			lines++
			if strings.HasSuffix(l, " ms so far") {
				withP99++
			}
		}
	}
	// Those before a thread has handed its first second over (an operation
	// of its ending after 1 s) have no p99 yet; on a busy machine the lines
	// come later than every 0.4 s (each waits a full interval after the
	// last), so the run lasts long enough for two seconds to be handed
	// over.
	if lines < 2 || lines > 6 || withP99 < 1 {
		t.Errorf("%d status lines (%d with a p99) in 2.5 s at one per 0.4 s:\n%s", lines, withP99, log.String())
	}
	q := res.Watch["opcounters.query"]
	if q.Samples < 8 || int64(q.End-q.Start) != res.Total.Count || q.Max != q.End || q.Min != q.Start {
		t.Errorf("watched opcounters.query %+v over %d reads", q, res.Total.Count)
	}
	if c := res.Watch["connections.current"]; c.Max < 3 || c.Mean <= 0 {
		t.Errorf("watched connections.current %+v: the run's two threads and the watcher at least", c)
	}
	_, err = s.Workload(ctx, workload.Spec{NS: "st.c", Ops: 10, Mix: workload.Mix{Read: 1}, KeySpace: 1000, Watch: []string{"no.such.field"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "serverStatus has no number at no.such.field") {
		t.Errorf("watching a missing field: %v", err)
	}
}

// TestWorkloadDefaultsFromTheRun: a Go caller gets the defaults a playbook
// gets: the namespace and document size of the run's last load, and the
// key space from the server's collStats.
func TestWorkloadDefaultsFromTheRun(t *testing.T) {
	ctx := context.Background()
	r, s, _ := startLoadedRun(t, "df.c", 700)
	if got := r.Loads().Last(); got != "df.c" {
		t.Fatalf("the run's last load %q, want df.c", got)
	}
	spec, err := workload.Complete(ctx, s, r.Loads(), workload.Spec{Ops: 50, Mix: workload.Mix{Read: 1, Update: 1}},
		workload.Defaults{KeySpace: true, DocBytes: true, WorkingSet: &workload.WorkingSet{Size: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if spec.NS != "df.c" || spec.KeySpace != 700 || spec.DocBytes != 256 || spec.WorkingSetKeys != 350 {
		t.Fatalf("completed spec %+v: want df.c, 700 keys of 256 bytes, 350 in the working set", spec)
	}
	res, err := s.Workload(ctx, spec, nil)
	if err != nil || res.Total.Count != 50 || res.Total.Errors != 0 {
		t.Errorf("workload on the completed spec: %v, %+v", err, res.Total)
	}
}
