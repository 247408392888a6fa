package engine

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// newBenchRun is newTestRun for benchmarks, with the sampler off.
func newBenchRun(b *testing.B) (*Run, *store.Store, *bytes.Buffer) {
	return startTestRun(b, Config{MongodBinary: startTestServerBinary(b)})
}

// newTestRun opens a store in a temp dir and starts a run on the built-in
// target.
func newTestRun(t *testing.T, interval time.Duration) (*Run, *store.Store, *bytes.Buffer) {
	t.Helper()
	return startTestRun(t, Config{MongodBinary: startTestServerBinary(t), SampleInterval: interval})
}

func cacheMax(t *testing.T, s *Server) int64 {
	t.Helper()
	st, err := s.ServerStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return lookupInt(st, "wiredTiger", "cache", "maximum bytes configured")
}

func TestRunRestartChangesCacheSize(t *testing.T) {
	ctx := context.Background()
	r, st, _ := newTestRun(t, 0)
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cacheMax(t, s); got != 268435456 {
		t.Fatalf("cache at start = %d", got)
	}
	gb := 0.5
	if err := s.Restart(ctx, changing(hostctl.Settings{CacheSizeGB: gb})); err != nil {
		t.Fatal(err)
	}
	if got := cacheMax(t, s); got != 536870912 {
		t.Errorf("cache after restart to 0.5 GB = %d, want 536870912", got)
	}
	bad := 0.1
	err = s.Restart(ctx, changing(hostctl.Settings{CacheSizeGB: bad}))
	if err == nil || !strings.Contains(err.Error(), "0.25") {
		t.Errorf("restart with cacheSizeGB 0.1: %v", err)
	}
	if got := cacheMax(t, s); got != 536870912 {
		t.Errorf("a refused restart touched the server: cache %d", got)
	}
	set, err := s.Settings(ctx)
	if err != nil || set.CacheSizeGB != 0.5 || set.CacheMaxBytes != 536870912 || set.Parameters["wiredTigerEngineRuntimeConfig"] == nil {
		t.Errorf("settings = %+v, %v", set, err)
	}
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	run, err := st.GetRun(ctx, r.ID)
	if err != nil || run.Status != record.StatusOK {
		t.Errorf("run = %+v %v", run, err)
	}
}

func TestStepRecordsSamplesDeltasAndProvenance(t *testing.T) {
	ctx := context.Background()
	r, st, _ := newTestRun(t, 100*time.Millisecond)
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "bench.c", Docs: 5000, DocBytes: 1000}, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := st.SampleCount(ctx, r.ID)
	drop := r.DropCaches(ctx)
	rec, err := r.Step(ctx, StepSpec{Name: "reads", Labels: map[string]any{"round": 1}}, func(ctx context.Context) (any, error) {
		return s.Workload(ctx, workload.Spec{NS: "bench.c", Duration: 700 * time.Millisecond, Threads: 2, Mix: workload.Mix{Read: 1}, KeySpace: 5000}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Flush(ctx)
	after, _ := st.SampleCount(ctx, r.ID)
	if after-before < 5 {
		t.Errorf("sampler wrote %d samples during a 0.7 s workload at 100 ms", after-before)
	}
	srcs, _ := st.SampleSources(ctx, r.ID)
	if strings.Join(srcs, ",") != "host,server:m1" {
		t.Errorf("sample sources = %v", srcs)
	}
	wr := rec.Result.(workload.Result)
	if rec.Server == nil || rec.Server.Opcounters["query"] != float64(wr.Ops["read"].Count) {
		t.Errorf("opcounters delta %v vs %d reads", rec.Server, wr.Ops["read"].Count)
	}
	if v(rec.Server.CacheUsedPeak) <= 0 || v(rec.Server.CacheMax) != 268435456 || v(rec.Server.PagesRead) < 0 {
		t.Errorf("deltas = %+v", rec.Server)
	}
	p := rec.Provenance
	if p == nil || p.Documents == nil || *p.Documents != 5000 || p.DatasetBytes == nil || *p.DatasetBytes < 4_000_000 {
		t.Fatalf("provenance = %+v", p)
	}
	// The server was started for this run (its WiredTiger cache began
	// empty) and the drop either happened or says why not.
	wantCleared := "restart"
	if drop.Dropped {
		wantCleared = "drop_caches+restart"
	}
	if p.Cleared != wantCleared || !p.DropTried || p.Dropped != drop.Dropped || p.DropReason != drop.Reason {
		t.Errorf("cleared %q (drop tried %v, dropped %v, %q), want %q after %+v", p.Cleared, p.DropTried, p.Dropped, p.DropReason, wantCleared, drop)
	}
	// 5 MB in a 256 MB cache: the reads find every page in WiredTiger's
	// cache, whatever happened to the OS page cache.
	if *rec.Server.PagesRead == 0 {
		if p.Verdict != "hot" || p.Reason != "WiredTiger read no pages into its cache: the data was already in the WiredTiger cache" {
			t.Errorf("verdict %q (%s), want hot: no pages read", p.Verdict, p.Reason)
		}
	} else if p.Verdict == "" {
		t.Errorf("no verdict with %v pages read", *rec.Server.PagesRead)
	}
	series, err := st.Series(ctx, r.ID, "server:m1", "wiredTiger.cache.bytes currently in the cache")
	if err != nil || len(series) < 6 {
		t.Errorf("series: %d points, %v", len(series), err)
	}
	steps, _ := st.Steps(ctx, r.ID)
	if len(steps) != 1 || steps[0].Status != record.StatusOK || !strings.Contains(string(steps[0].Results), "pages_read") {
		t.Errorf("stored steps = %+v", steps)
	}
	var buf bytes.Buffer
	record.WriteReport(&buf, r.Steps(), record.ReportOptions{By: "cacheSizeGB"})
	if !strings.Contains(buf.String(), "reads") || !strings.Contains(buf.String(), "0.25") {
		t.Errorf("report:\n%s", buf.String())
	}
}

func TestFinishStopsServers(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	s, err := r.StartServer(ctx, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if err := r.Finish(ctx, record.StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("server %d still running after Finish", pid)
	}
}

func TestStepNoticesACrash(t *testing.T) {
	ctx := context.Background()
	r, _, _ := newTestRun(t, 0)
	s, err := r.StartServer(ctx, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "x.c", Docs: 1000, DocBytes: 200}, nil); err != nil {
		t.Fatal(err)
	}
	rec, err := r.Step(ctx, StepSpec{Name: "crash"}, func(ctx context.Context) (any, error) {
		syscall.Kill(s.PID(), syscall.SIGKILL)
		time.Sleep(300 * time.Millisecond)
		return s.Workload(ctx, workload.Spec{NS: "x.c", Ops: 100, Mix: workload.Mix{Read: 1}, KeySpace: 1000}, nil)
	})
	if err == nil || rec.Status != record.StatusFailed || !strings.Contains(err.Error(), "server m1 exited (killed by signal 9, SIGKILL)") || !strings.Contains(err.Error(), "last log lines") {
		t.Errorf("step after a crash: status %s, err %v", rec.Status, err)
	}
}
