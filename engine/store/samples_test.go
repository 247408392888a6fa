package store

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sampleStream makes n maps for one source: metrics appear and disappear,
// values move, and NaN, ±Inf and -0 turn up.
func sampleStream(seed uint64, n, keys int) []map[string]float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	cur := map[string]float64{}
	out := make([]map[string]float64, n)
	for i := range out {
		for k := range keys {
			name := fmt.Sprintf("m.%d", k)
			v, ok := cur[name]
			switch r := rng.IntN(100); {
			case !ok && r < 30:
				cur[name] = float64(rng.IntN(1000))
			case ok && r < 3:
				delete(cur, name)
			case ok && r < 6:
				cur[name] = specialValues[rng.IntN(len(specialValues))]
			case ok && r < 30:
				cur[name] = v + float64(rng.IntN(50))
			}
		}
		m := make(map[string]float64, len(cur))
		for k, v := range cur {
			m[k] = v
		}
		out[i] = m
	}
	return out
}

var cmpSamples = cmp.Options{cmpopts.EquateEmpty(),
	// Bit for bit, so -0 is not 0, except that any NaN equals any NaN.
	cmp.Comparer(func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}),
}

func TestSamplesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{KeyframeEvery: 7, BatchSize: 16})
	t0 := time.Unix(1700000000, 0)
	runA, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	runB, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "b.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	type chain struct {
		run    int64
		source string
		maps   []map[string]float64
	}
	var chains []chain
	for i, src := range []string{"host", "server:m1", "server:m2", "server:m3"} {
		chains = append(chains,
			chain{runA, src, sampleStream(uint64(i), 50, 40)},
			chain{runB, src, sampleStream(uint64(i+10), 30, 25)})
	}
	// Interleave the chains as a sampler of several sources would.
	for i := range 50 {
		for _, c := range chains {
			if i < len(c.maps) {
				s.AddSample(c.run, c.source, t0.Add(time.Duration(i)*time.Second), c.maps[i])
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	for _, c := range chains {
		t.Run(fmt.Sprintf("run %d %s", c.run, c.source), func(t *testing.T) {
			var want []Sample
			for i, m := range c.maps {
				want = append(want, Sample{TS: t0.Add(time.Duration(i) * time.Second), Metrics: m})
			}
			got, err := s.Samples(ctx, c.run, c.source, time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpSamples); diff != "" {
				t.Fatalf("Samples (-want +got):\n%s", diff)
			}
			// Ranges that start inside a delta chain.
			for _, r := range [][2]int{{0, 0}, {3, 9}, {7, 7}, {8, 20}, {len(want) - 1, len(want) - 1}} {
				got, err := s.Samples(ctx, c.run, c.source, want[r[0]].TS, want[r[1]].TS)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want[r[0]:r[1]+1], got, cmpSamples); diff != "" {
					t.Errorf("Samples %d..%d (-want +got):\n%s", r[0], r[1], diff)
				}
			}
			var wantPts []Point
			for _, smp := range want {
				if v, ok := smp.Metrics["m.3"]; ok {
					wantPts = append(wantPts, Point{TS: smp.TS, Value: v})
				}
			}
			pts, err := s.Series(ctx, c.run, c.source, "m.3")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantPts, pts, cmpSamples); diff != "" {
				t.Errorf("Series m.3 (-want +got):\n%s", diff)
			}
		})
	}

	tests := []struct {
		run         int64
		wantSources []string
		wantCount   int64
	}{
		{runA, []string{"host", "server:m1", "server:m2", "server:m3"}, 4 * 50},
		{runB, []string{"host", "server:m1", "server:m2", "server:m3"}, 4 * 30},
		{4242, nil, 0},
	}
	for _, tt := range tests {
		src, err := s.SampleSources(ctx, tt.run)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.wantSources, src); diff != "" {
			t.Errorf("SampleSources(%d) (-want +got):\n%s", tt.run, diff)
		}
		n, err := s.SampleCount(ctx, tt.run)
		if err != nil || n != tt.wantCount {
			t.Errorf("SampleCount(%d) = %d, %v; want %d", tt.run, n, err, tt.wantCount)
		}
	}
	for _, q := range [][2]string{{"nosuch", "m.1"}, {"host", "nosuch"}} {
		pts, err := s.Series(ctx, runA, q[0], q[1])
		if err != nil || len(pts) != 0 {
			t.Errorf("Series(%s, %s) = %v, %v; want nothing", q[0], q[1], pts, err)
		}
	}
}

func TestSampleTimesKeepChainOrder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	runID, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	// The clock steps back (NTP) and repeats itself.
	times := []time.Time{t0, t0.Add(2 * time.Second), t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second)}
	for i, ts := range times {
		s.AddSample(runID, "host", ts, map[string]float64{"i": float64(i)})
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.Series(ctx, runID, "host", "i")
	if err != nil {
		t.Fatal(err)
	}
	after := t0.Add(2 * time.Second)
	want := []Point{{t0, 0}, {after, 1}, {after.Add(1), 2}, {after.Add(2), 3}, {t0.Add(3 * time.Second), 4}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Series (-want +got):\n%s", diff)
	}
}

// TestReaderWhileWriting opens the same file twice, as `wtd runs` does
// while `wtd run` writes, and reads all along.
func TestReaderWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	// Blocks of 7: the writer replaces rows while the reader reads.
	writer := openTest(t, path, Options{FlushInterval: 5 * time.Millisecond, BlockSamples: 7})
	reader := openTest(t, path, Options{})
	runID, err := writer.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	g := newServerStatusLike(1, 300, 0.1)
	t0 := time.Unix(1700000000, 0)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			writer.AddSample(runID, "server:m1", t0.Add(time.Duration(i)*time.Second), g.next())
			if i%50 == 0 {
				writer.AddEvent(runID, t0, "info", "engine", fmt.Sprintf("sample %d", i), nil)
				time.Sleep(2 * time.Millisecond)
			}
		}
	}()
	last := int64(-1)
	for reads := 0; ; reads++ {
		runs, err := reader.ListRuns(ctx, 10)
		if err != nil {
			t.Fatalf("read %d: list runs: %v", reads, err)
		}
		if len(runs) != 1 || runs[0].Status != StatusRunning {
			t.Fatalf("read %d: runs %+v, want one running", reads, runs)
		}
		count, err := reader.SampleCount(ctx, runID)
		if err != nil {
			t.Fatalf("read %d: count samples: %v", reads, err)
		}
		if count < last {
			t.Fatalf("read %d: %d samples after %d", reads, count, last)
		}
		last = count
		smp, err := reader.Samples(ctx, runID, "server:m1", time.Time{}, time.Time{})
		if err != nil {
			t.Fatalf("read %d: samples: %v", reads, err)
		}
		if int64(len(smp)) < count {
			t.Fatalf("read %d: decoded %d samples, counted %d before", reads, len(smp), count)
		}
		if count > 3 {
			// From a sample that may be a row of its own or in a block.
			from := t0.Add(time.Duration(count-3) * time.Second)
			tail, err := reader.Samples(ctx, runID, "server:m1", from, time.Time{})
			if err != nil {
				t.Fatalf("read %d: samples from %d: %v", reads, count-3, err)
			}
			if len(tail) < 3 || !tail[0].TS.Equal(from) {
				t.Fatalf("read %d: %d samples from %d, want 3 or more from it", reads, len(tail), count-3)
			}
		}
		if count == n {
			t.Logf("%d reads while writing", reads)
			break
		}
		if reads > 100000 {
			t.Fatalf("only %d of %d samples arrived", count, n)
		}
	}
	wg.Wait()
	if err := writer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
