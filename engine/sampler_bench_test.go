package engine

import (
	"context"
	"testing"
	"time"

	"wtd/engine/workload"
	"wtd/hostctl"
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
