package engine

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/workload"
	"wtd/hostctl"
	"wtd/internal/fakemongod"
	"wtd/internal/ftdc"
	"wtd/internal/testbench"
)

// BenchmarkSamplerCPU measures the CPU wtd spends on one sample (host
// metrics, a full serverStatus, flattening, and the SQLite write), and so
// its cost at 1 Hz as a share of one core:
//
//	go test ./engine -run '^$' -bench SamplerCPU -benchtime 200x
func BenchmarkSamplerCPU(b *testing.B) {
	ctx := context.Background()
	r, st, _ := newBenchRun(b)
	if _, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}}); err != nil {
		b.Fatal(err)
	}
	r.sampler.sampleOnce()
	st.Flush(ctx)
	b.ResetTimer()
	cpu0 := testbench.CPU()
	for i := 0; i < b.N; i++ {
		r.sampler.sampleOnce()
	}
	st.Flush(ctx)
	cpu := testbench.CPU() - cpu0
	b.StopTimer()
	per := cpu / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "cpu_ms/sample")
	b.ReportMetric(100*per.Seconds(), "%core_at_1Hz")
}

// BenchmarkWorkloadWithSampler compares a read workload's ops/s with the
// sampler off and at 1 Hz against the same server: alternating pairs of
// 2 s runs, reporting the median ratio (on/off) and its spread.
func BenchmarkWorkloadWithSampler(b *testing.B) {
	ctx := context.Background()
	r, _, _ := newBenchRun(b)
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "bench.c", Docs: 20000, DocBytes: 1000}, nil); err != nil {
		b.Fatal(err)
	}
	spec := workload.Spec{NS: "bench.c", Duration: 2 * time.Second, Threads: 2, Mix: workload.Mix{Read: 1}, KeySpace: 20000}
	run := func() float64 {
		res, err := s.Workload(ctx, spec, nil)
		if err != nil {
			b.Fatal(err)
		}
		return res.Total.OpsPerSec
	}
	off := run
	on := func() float64 {
		r.sampler.interval = time.Second
		r.sampler.stopCh, r.sampler.done = make(chan struct{}), make(chan struct{})
		r.sampler.start()
		defer func() { r.sampler.stop(); r.sampler.interval = 0 }()
		return run()
	}
	var ratios []float64
	for b.Loop() {
		ratios = append(ratios, testbench.Pairs(15, off, on)...)
	}
	// Sampling at 1 Hz must cost under 1% of one core: no visible slowdown.
	testbench.ReportRatios(b, "ratio", ratios, 0.97)
}

// replayedFile is the largest real 8.0 replica-set member file in
// testdata: 5,558 metrics a sample (internal/ftdc/testdata/SOURCES.md).
const replayedFile = "../internal/ftdc/testdata/8.0.15/PHieu160105+mongodb_replica--metrics.interim"

// BenchmarkSamplerReplayed measures the sampler at a real 8.0 replica-set
// member's size: a fake server answers serverStatus with the real file's
// samples in turn. Each interval is committed on its own, as at 1 Hz. It
// reports the CPU of one interval (the process's: the fake server's
// replies and the host collector are in it too) as a share of one core at
// 1 Hz, and the bytes stored for the server's samples per hour beside
// those of FTDC for the same samples: the file's own bytes per sample, and
// the same serverStatus documents written as FTDC by internal/ftdc in
// chunks of 300 samples as mongod writes them. Use -benchtime 600x or more,
// so that the samples reach the store's blocks:
//
//	go test ./engine -run '^$' -bench SamplerReplayed -benchtime 900x
func BenchmarkSamplerReplayed(b *testing.B) {
	ctx := context.Background()
	fake, err := fakemongod.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	rp, err := fake.ReplayServerStatus(replayedFile)
	if err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(replayedFile)
	if err != nil {
		b.Fatal(err)
	}
	r, st, _ := startTestRun(b, Config{})
	if _, err := r.ConnectServer(ctx, fake.URI(), 5*time.Second); err != nil {
		b.Fatal(err)
	}
	r.sampler.sampleOnce()
	if err := st.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := testbench.CPU()
	for b.Loop() {
		r.sampler.sampleOnce()
		if err := st.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu := testbench.CPU() - cpu0
	b.StopTimer()
	n := b.N + 1
	// The run's end seals the samples still open into a block.
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		b.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	stored := storedFrameBytes(b, st.Path(), r.ID, "server:m1")
	ftdcBytes := rewrittenFTDC(b, rp, n)
	metrics := len(FlattenNumbers(rp.Sample(0)))
	per := cpu / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "cpu_ms/sample")
	b.ReportMetric(100*per.Seconds(), "%core_at_1Hz")
	b.ReportMetric(float64(metrics), "metrics/sample")
	b.ReportMetric(float64(stored)/float64(n)*3600, "stored_B/h")
	b.ReportMetric(float64(fi.Size())/float64(rp.Samples)*3600, "file_ftdc_B/h")
	b.ReportMetric(float64(ftdcBytes)/float64(n)*3600, "ftdc300_B/h")
}

// storedFrameBytes returns the bytes of the frames of one source of a run.
func storedFrameBytes(b *testing.B, path string, run int64, source string) int64 {
	b.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow(`SELECT coalesce(sum(length(frame)), 0) FROM samples JOIN sample_sources src ON src.id = source_id
		WHERE run_id = ? AND src.name = ?`, run, source).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// rewrittenFTDC writes n of the replayed serverStatus samples, in turn, as
// FTDC in chunks of 300 and returns the bytes.
func rewrittenFTDC(b *testing.B, rp *fakemongod.Replay, n int) int {
	b.Helper()
	var buf bytes.Buffer
	w := ftdc.NewWriter(&buf)
	t0 := time.Unix(1700000000, 0)
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		doc := bson.D{{Key: "start", Value: at}, {Key: "serverStatus", Value: rp.Sample(i % rp.Samples)}, {Key: "end", Value: at}}
		if err := w.Add(at, doc); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return buf.Len()
}
