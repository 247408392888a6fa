package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbench"
)

const (
	benchKeys     = 20000
	benchDocBytes = 1024
	benchOps      = 10000 // per measured run
	benchPairs    = 15    // alternating pairs of runs per comparison
	// workloadBudget is the design budget: wtd's ops/s at least 95% of a
	// bare driver loop's.
	workloadBudget = 0.95
)

// BenchmarkWorkloadVsBareLoop compares, against one minimongod, the
// read-only throughput of a workload as playbooks run it (as
// engine.Server.Workload does: no retries, an Abort hook, so contexts
// without a Done channel) with a bare Go-driver loop doing the same
// requests from the same number of goroutines, on the same client: a filter
// {_id: int64} encoded once and changed in place (as wtd does), the reply
// checked for an error only (as wtd does). It runs benchPairs alternating
// pairs and reports the median ratio wtd/bare with its spread, and whether
// the budget (>= 0.95) holds, plus the client CPU per operation of each
// (process CPU time, so it includes the driver's own goroutines).
func BenchmarkWorkloadVsBareLoop(b *testing.B) {
	ctx := context.Background()
	uri := benchLoadedServer(b)
	for _, threads := range []int{1, 4} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			coll := benchWarmClient(b, uri, threads)
			var bareCPU, wtdCPU []float64
			seed := int64(0)
			runBare := func() float64 {
				began, cpu := time.Now(), testbench.CPU()
				if err := benchBareReads(ctx, coll, threads, benchOps); err != nil {
					b.Fatal(err)
				}
				bareCPU = append(bareCPU, float64((testbench.CPU()-cpu).Nanoseconds())/1e3/benchOps)
				return benchOps / time.Since(began).Seconds()
			}
			runWtd := func() float64 {
				cpu := testbench.CPU()
				seed++
				res, err := Run(ctx, coll.Database().Client(), Spec{NS: "bench.c", Ops: benchOps, Threads: threads,
					Mix: Mix{Read: 1}, KeySpace: benchKeys, Seed: seed}, Hooks{Abort: func() {}})
				if err != nil || res.Total.Count != benchOps {
					b.Fatalf("workload: %v, %d ops", err, res.Total.Count)
				}
				wtdCPU = append(wtdCPU, float64((testbench.CPU()-cpu).Nanoseconds())/1e3/benchOps)
				return res.Total.OpsPerSec
			}
			var ratios []float64
			for b.Loop() {
				ratios = append(ratios, testbench.Pairs(benchPairs, runBare, runWtd)...)
			}
			testbench.ReportRatios(b, "ratio", ratios, workloadBudget)
			b.ReportMetric(median(bareCPU), "bare_cpu_us/op")
			b.ReportMetric(median(wtdCPU), "wtd_cpu_us/op")
		})
	}
}

// benchLoadedServer starts a server and loads benchKeys documents into
// bench.c; it returns the server's URI.
func benchLoadedServer(b *testing.B) string {
	client, srv := startTestServer(b)
	if _, err := Load(context.Background(), client, LoadSpec{NS: "bench.c", Docs: benchKeys, DocBytes: benchDocBytes, Threads: 2}, Hooks{}); err != nil {
		b.Fatal(err)
	}
	return srv.URI
}

// benchWarmClient connects a client of threads connections to uri as
// engine.Server.Workload makes one (no retries; disconnected when b
// ends), warms the cache with bare reads and returns its bench.c.
func benchWarmClient(b *testing.B, uri string, threads int) *mongo.Collection {
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(uri + "/?directConnection=true").
		SetMaxPoolSize(uint64(threads + 1)).SetRetryReads(false).SetRetryWrites(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { client.Disconnect(ctx) })
	coll := client.Database("bench").Collection("c")
	if err := benchBareReads(ctx, coll, threads, 2000); err != nil {
		b.Fatal(err)
	}
	return coll
}

// benchBareReads is the plain driver loop: threads goroutines share ops
// FindOne calls by uniformly random _id, each with a filter encoded once
// and changed in place, as wtd's workload does.
func benchBareReads(ctx context.Context, coll *mongo.Collection, threads, ops int) error {
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		n := ops / threads
		if i < ops%threads {
			n++
		}
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 99))
			filter := newIDFilter()
			arg := bson.Raw(filter)
			for range n {
				setFilterID(filter, r.Int64N(benchKeys))
				if err := coll.FindOne(ctx, arg).Err(); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("bare read: %w", err)
		}
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkMeasurementPath measures what wtd adds to every operation,
// without the server: recording a finished operation (run-long and
// per-second histograms plus counters), the same with the two clock
// readings around it, and drawing the operation and its key.
func BenchmarkMeasurementPath(b *testing.B) {
	used := [numOps]bool{true, true, true}
	b.Run("record", func(b *testing.B) {
		t := newWorkloadThread(0, 1, used)
		var took time.Duration
		for b.Loop() {
			took = (took + 7919*time.Nanosecond) % (50 * time.Millisecond)
			t.record(opRead, took, nil)
		}
	})
	b.Run("clock+record", func(b *testing.B) {
		t := newWorkloadThread(0, 1, used)
		start := time.Now()
		for b.Loop() {
			began := time.Now()
			ended := time.Now()
			_ = int(ended.Sub(start) / time.Second)
			t.record(opRead, ended.Sub(began), nil)
		}
	})
	// What an open loop adds per operation, with the operation due at once
	// (no waiting): claiming it from the schedule, the clock readings, and
	// recording the corrected and service latencies and the lateness.
	b.Run("schedule+clock+record", func(b *testing.B) {
		w := &workloadRun{}
		if _, _, err := w.check(Spec{NS: "d.c", Duration: time.Hour, Mix: Mix{Read: 1}, KeySpace: 1e7, Rate: 1e7}); err != nil {
			b.Fatal(err)
		}
		w.start = time.Now().Add(-time.Minute) // every operation is already due
		t := newWorkloadThread(0, 1, w.used)
		t.openLoop()
		stop := make(chan struct{})
		for b.Loop() {
			i := w.sched.next.Add(1) - 1
			at := w.sched.at(i)
			t.measuring = w.scheduledMeasured(i, at)
			due := w.start.Add(at)
			if ok, late := t.waitUntil(due, stop); !ok || w.pastEnd(at+late-w.drainGrace()) {
				b.Fatal("past the end")
			}
			began := time.Now()
			ended := time.Now()
			t.recordScheduled(opRead, ended.Sub(due), ended.Sub(began), began.Sub(due), nil)
		}
	})
	for _, dist := range distributions {
		b.Run("pick/"+dist, func(b *testing.B) {
			w := &workloadRun{}
			if _, _, err := w.check(Spec{NS: "d.c", Ops: 1, Mix: Mix{Read: 1, Update: 1}, KeySpace: 1e7,
				Distribution: dist, DocBytes: 1024}); err != nil {
				b.Fatal(err)
			}
			t := newWorkloadThread(0, 1, w.used)
			filter := newIDFilter()
			var sink opKind
			for b.Loop() {
				sink += w.pickOp(t.rng)
				setFilterID(filter, w.keys.pick(t.rng))
			}
			_ = sink
		})
	}
}

const (
	benchRate      = 2000 // ops/s: a rate minimongod serves with room to spare
	benchRateOps   = 4000 // per measured run: 2 s
	benchRatePairs = 10
	// rateBudgetMicros is the design budget: wtd's CPU per operation of an
	// open loop at most this much above a bare driver loop paced to the
	// same rate.
	rateBudgetMicros = 2.0
)

// BenchmarkRateLimitedCPU measures what an open loop (a rate) costs wtd per
// operation, as process CPU time (user and system, the driver's own
// goroutines included), against a bare Go-driver loop paced to the same
// rate with time.Sleep: the same reads, the same client and threads. Both
// runs are timed from a client connected beforehand, so the figures are
// per operation, without the workload's own connection set-up. It
// alternates benchRatePairs pairs and reports the median CPU per operation
// of each, of a closed bare loop (the driver's cost with no pacing at all)
// and the median per-pair difference wtd - paced, with whether the budget
// (< 2 µs) holds.
func BenchmarkRateLimitedCPU(b *testing.B) {
	ctx := context.Background()
	uri := benchLoadedServer(b)
	const threads = 4
	coll := benchWarmClient(b, uri, threads)
	client := coll.Database().Client()
	cpuPerOp := func(f func()) float64 {
		cpu := testbench.CPU()
		f()
		return float64((testbench.CPU() - cpu).Nanoseconds()) / 1e3 / benchRateOps
	}
	var paced, wtd, closed, extra []float64
	var seed int64
	runWtd := func() {
		seed++
		res, err := Run(ctx, client, Spec{NS: "bench.c", Ops: benchRateOps, Threads: threads, Mix: Mix{Read: 1},
			KeySpace: benchKeys, Seed: seed, Rate: benchRate}, Hooks{Abort: func() {}}) // as Server.Workload: contexts without a Done channel
		if err != nil || res.Total.Count != benchRateOps || res.Behind {
			b.Fatalf("workload: %v, %d ops, behind %v", err, res.Total.Count, res.Behind)
		}
	}
	runPaced := func() {
		if err := benchPacedReads(ctx, coll, threads, benchRateOps, benchRate); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		for i := range benchRatePairs {
			var p, x float64
			if i%2 == 0 {
				p, x = cpuPerOp(runPaced), cpuPerOp(runWtd)
			} else {
				x, p = cpuPerOp(runWtd), cpuPerOp(runPaced)
			}
			paced, wtd, extra = append(paced, p), append(wtd, x), append(extra, x-p)
			closed = append(closed, cpuPerOp(func() {
				if err := benchBareReads(ctx, coll, threads, benchRateOps); err != nil {
					b.Fatal(err)
				}
			}))
		}
	}
	b.ReportMetric(median(paced), "paced_cpu_us/op")
	b.ReportMetric(median(wtd), "wtd_rate_cpu_us/op")
	b.ReportMetric(median(closed), "closed_cpu_us/op")
	b.ReportMetric(median(extra), "extra_us/op")
	s2 := slices.Clone(extra)
	slices.Sort(s2)
	verdict := "holds"
	if median(extra) >= rateBudgetMicros {
		verdict = "does NOT hold"
	}
	b.Logf("open loop at %d/s, %d threads: wtd %.1f µs/op, paced bare loop %.1f µs/op, closed bare loop %.1f µs/op; wtd - paced: median %.2f µs over %d pairs (min %.2f, max %.2f): the budget of %.0f µs %s",
		benchRate, threads, median(wtd), median(paced), median(closed), median(extra), len(extra), s2[0], s2[len(s2)-1], rateBudgetMicros, verdict)
}

// benchPacedReads is the bare driver loop paced to rate: goroutine g does
// operations g, g+threads, ..., each after sleeping until its time.
func benchPacedReads(ctx context.Context, coll *mongo.Collection, threads, ops int, rate float64) error {
	errs := make([]error, threads)
	start := time.Now()
	var wg sync.WaitGroup
	for g := range threads {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 98))
			filter := newIDFilter()
			arg := bson.Raw(filter)
			for i := g; i < ops; i += threads {
				time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * 1e9))))
				setFilterID(filter, r.Int64N(benchKeys))
				if err := coll.FindOne(ctx, arg).Err(); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
