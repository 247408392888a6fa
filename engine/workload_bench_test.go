package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

const (
	benchKeys     = 20000
	benchDocBytes = 1024
	benchOps      = 20000 // per measured run
	benchRounds   = 6     // bare and wtd runs, each first in half the rounds; the medians are reported
)

// BenchmarkWorkloadVsBareLoop compares, against one minimongod, the
// read-only throughput of RunWorkload with a bare Go-driver loop doing the
// same FindOne-by-random-_id requests from the same number of goroutines.
// The design budget is wtd's ops/s within 5% of the bare loop's (ratio >=
// 0.95). Each iteration runs both benchRounds times, alternating which
// goes first, and reports the medians, and the client CPU per operation of
// each (process CPU time, so it includes the driver's own goroutines).
func BenchmarkWorkloadVsBareLoop(b *testing.B) {
	client, _ := startTestServer(b)
	ctx := context.Background()
	if _, err := Load(ctx, client, LoadSpec{NS: "bench.c", Docs: benchKeys, DocBytes: benchDocBytes, Threads: 2}, nil); err != nil {
		b.Fatal(err)
	}
	coll := client.Database("bench").Collection("c")
	if err := benchBareReads(ctx, coll, 2, 2000); err != nil { // warm the cache and the connection pool
		b.Fatal(err)
	}
	for _, threads := range []int{1, 4} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			var bare, wtd, bareCPU, wtdCPU []float64
			runBare := func() {
				began, cpu := time.Now(), benchCPU()
				if err := benchBareReads(ctx, coll, threads, benchOps); err != nil {
					b.Fatal(err)
				}
				bare = append(bare, benchOps/time.Since(began).Seconds())
				bareCPU = append(bareCPU, float64((benchCPU()-cpu).Nanoseconds())/1e3/benchOps)
			}
			runWtd := func() {
				cpu := benchCPU()
				res, err := RunWorkload(ctx, client, WorkloadSpec{NS: "bench.c", Ops: benchOps, Threads: threads,
					Mix: Mix{Read: 1}, KeySpace: benchKeys, Seed: int64(len(wtd))}, nil)
				if err != nil || res.Total.Count != benchOps {
					b.Fatalf("workload: %v, %d ops", err, res.Total.Count)
				}
				wtd = append(wtd, res.Total.OpsPerSec)
				wtdCPU = append(wtdCPU, float64((benchCPU()-cpu).Nanoseconds())/1e3/benchOps)
			}
			for b.Loop() {
				for round := range benchRounds { // alternate who goes first
					if round%2 == 0 {
						runBare()
						runWtd()
					} else {
						runWtd()
						runBare()
					}
				}
			}
			mb, mw := median(bare), median(wtd)
			b.ReportMetric(mb, "bare_ops/s")
			b.ReportMetric(mw, "wtd_ops/s")
			b.ReportMetric(mw/mb, "ratio")
			b.ReportMetric(median(bareCPU), "bare_cpu_us/op")
			b.ReportMetric(median(wtdCPU), "wtd_cpu_us/op")
		})
	}
}

// benchCPU returns the CPU time (user and system) this process has used;
// the client's CPU per operation is steadier than throughput on a busy
// machine.
func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBareReads is the plain driver loop: threads goroutines share ops
// FindOne calls by uniformly random _id.
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
			for range n {
				if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: r.Int64N(benchKeys)}}).Err(); err != nil {
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
	for _, dist := range []string{DistUniform, DistZipfian} {
		b.Run("pick/"+dist, func(b *testing.B) {
			w := &workloadRun{}
			if _, _, err := w.check(WorkloadSpec{NS: "d.c", Ops: 1, Mix: Mix{Read: 1, Update: 1}, KeySpace: 1e7,
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
