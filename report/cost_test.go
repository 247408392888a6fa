package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/internal/testbin"
)

// synthRun records a run of an hour sampled at 1 Hz: 60 workload steps of
// a minute each with their per-second series, a serverStatus of about 600
// metrics (the charted ones among them, counters growing) and the host's
// metrics every second.
func synthRun(t testing.TB, st *store.Store, seed uint64, start time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "playbooks/hour.lua", Playbook: "-- an hour", StartedAt: start,
		Params: map[string]any{"minutes": 60.0}, Host: store.HostFacts{Cores: 2, MemoryBytes: 24 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddServer(ctx, id, store.ServerRecord{Name: "m1", Started: true, URI: "mongodb://127.0.0.1:27017", Binary: "mongod", Version: "7.0.0"}); err != nil {
		t.Fatal(err)
	}
	server := map[string]float64{}
	for i := range 600 {
		server[fmt.Sprintf("wiredTiger.section%d.counter %d", i%20, i)] = float64(rng.IntN(1e6))
	}
	c := engine.CacheMetric
	server[c("maximum bytes configured")] = 1 << 30
	for s := range 3600 {
		ts := start.Add(time.Duration(s) * time.Second)
		for k := range server {
			if rng.IntN(3) == 0 {
				server[k] += float64(rng.IntN(1000))
			}
		}
		server[c("bytes currently in the cache")] = float64(500<<20 + rng.IntN(1<<20))
		server[c("tracked dirty bytes in the cache")] = float64(rng.IntN(50 << 20))
		server["wiredTiger.concurrentTransactions.read.out"] = float64(rng.IntN(8))
		server["globalLock.currentQueue.readers"] = float64(rng.IntN(3))
		st.AddSample(id, "server:m1", ts, server)
		st.AddSample(id, "host", ts, map[string]float64{"cpu.user": 40 + rng.Float64()*10, "cpu.system": 10 * rng.Float64(),
			"cpu.iowait": 5 * rng.Float64(), "disk.vda.read_bytes": 1e7 * rng.Float64(), "disk.vda.write_bytes": 1e7 * rng.Float64(),
			"mem.swap_used": 0})
	}
	for k := range 60 {
		stepStart := start.Add(time.Duration(k) * time.Minute)
		labels := map[string]any{"round": float64(k%3 + 1), "threads": float64(k / 3)}
		sid, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: "reads", Labels: labels, StartedAt: stepStart,
			Settings: json.RawMessage(`{"cache_size_gb":1}`), Provenance: json.RawMessage(`{"verdict":"hot","reason":"synthetic","cleared":"none","warmup":"none"}`)})
		if err != nil {
			t.Fatal(err)
		}
		var series []workload.SecondPoint
		total := int64(0)
		for s := range 60 {
			n := int64(8000 + rng.IntN(800))
			total += n
			series = append(series, workload.SecondPoint{Second: s, Counts: map[string]int64{"read": n}, P99Micros: map[string]float64{"read": 300 + 50*rng.Float64()}})
		}
		res := map[string]any{"result": map[string]any{"total": map[string]any{"count": total, "ops_per_sec": float64(total) / 60,
			"p50_micros": 110.0, "p99_micros": 320.0}, "series": series},
			"server": map[string]any{"pages_read": 100.0, "cache_used_peak": 520e6, "dirty_peak": 50e6, "app_thread_evict_micros": 0.0,
				"per_op": map[string]any{"pages_read_per_read": 100.0 / float64(total)}}}
		b, _ := json.Marshal(res)
		if err := st.FinishStep(ctx, sid, store.StepResult{Status: store.StatusOK, EndedAt: stepStart.Add(time.Minute), Results: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

// measure runs wtd with args and returns its wall time and peak RSS.
func measure(t *testing.T, wtd string, args ...string) (time.Duration, int64) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(wtd, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wtd %v: %v\n%s", args, err, out)
	}
	return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// TestCostOfAnHourRun: wtd report of a one-hour run sampled at 1 Hz takes
// under 5 s and 300 MB, and wtd compare of two such runs under 2 s (the
// processes as a user runs them). Recording the two runs takes about 5 s.
func TestCostOfAnHourRun(t *testing.T) {
	db := hourDB(t)
	wtd := testbin.Wtd(t)
	html := filepath.Join(t.TempDir(), "r.html")
	d, rss := measure(t, wtd, "report", "--db", db, "1", "-o", html)
	info, _ := os.Stat(html)
	t.Logf("report of an hour: %v, peak RSS %.0f MB, %.0f KB of HTML", d.Round(time.Millisecond), float64(rss)/(1<<20), float64(info.Size())/1024)
	if d > 5*time.Second || rss > 300<<20 {
		t.Errorf("report took %v and %d MB", d, rss>>20)
	}
	d, rss = measure(t, wtd, "compare", "--db", db, "1", "2")
	t.Logf("compare of two hours: %v, peak RSS %.0f MB", d.Round(time.Millisecond), float64(rss)/(1<<20))
	if d > 2*time.Second {
		t.Errorf("compare took %v", d)
	}
}

// hourDB records two one-hour runs in a new database.
func hourDB(t testing.TB) string {
	db := filepath.Join(t.TempDir(), "wtd.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-3 * time.Hour)
	synthRun(t, st, 1, start)
	synthRun(t, st, 2, start.Add(90*time.Minute))
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// BenchmarkReportHour measures Load and WriteHTML of a one-hour run in
// process.
func BenchmarkReportHour(b *testing.B) {
	db := hourDB(b)
	st, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(context.Background())
	b.ResetTimer()
	for range b.N {
		if err := WriteHTML(context.Background(), st, discard{}, 1); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
