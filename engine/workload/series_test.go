package workload

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSeriesCollector drives two threads by hand: a second is final only
// once both have moved past it, quiet seconds appear with zero counts and
// no p99, and counts and p99s are summed and merged over the threads.
func TestSeriesCollector(t *testing.T) {
	used := [numOps]bool{true, false, true}
	c := newSeriesCollector(2, used, true)
	a := newWorkloadThread(0, 1, used)
	b := newWorkloadThread(1, 1, used)
	ops := func(th *workloadThread, op opKind, n int, took time.Duration) {
		for range n {
			th.record(op, took, nil)
		}
	}
	ops(a, opRead, 3, 100*time.Microsecond)
	ops(b, opRead, 1, 5*time.Millisecond)
	b.record(opInsert, 0, errNoSuchDocument)
	c.flush(a, 1) // a moves on to second 1; b is still in second 0
	if len(c.points) != 0 {
		t.Fatalf("second 0 final while thread b is in it: %+v", c.points)
	}
	ops(a, opInsert, 2, 200*time.Microsecond)
	c.flush(a, 3)           // a: second 1 done, nothing in second 2
	c.flush(b, 3)           // b: second 0 done, nothing in 1 or 2
	ops(a, opRead, 1, 1000) // second 3
	c.flush(a, math.MaxInt)
	c.flush(b, math.MaxInt)
	want := []SecondPoint{
		{Second: 0, Counts: map[string]int64{OpRead: 4, OpInsert: 0}, P99Micros: map[string]float64{OpRead: 5023},
			Errors: map[string]int64{OpInsert: 1}},
		{Second: 1, Counts: map[string]int64{OpRead: 0, OpInsert: 2}, P99Micros: map[string]float64{OpInsert: 200}},
		{Second: 2, Counts: map[string]int64{OpRead: 0, OpInsert: 0}, P99Micros: map[string]float64{}},
		{Second: 3, Counts: map[string]int64{OpRead: 1, OpInsert: 0}, P99Micros: map[string]float64{OpRead: 1}},
	}
	// 2 significant digits: 5000 µs reads back as the top of its bucket, 5023.
	if diff := cmp.Diff(want, c.points, cmpopts.IgnoreFields(SecondPoint{}, "Hist")); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	// Each second keeps the histogram of each operation that succeeded in
	// it, and they merge to the whole: 5 reads and 2 inserts.
	for i, want := range []string{"read", "insert", "", "read"} {
		if got := strings.Join(slices.Sorted(maps.Keys(c.points[i].Hist)), ","); got != want {
			t.Errorf("second %d: histograms of %q, want %q", i, got, want)
		}
	}
	all, err := MergeSeconds(c.points)
	if err != nil || all.TotalCount() != 7 {
		t.Fatalf("merged: %v, %v", all, err)
	}
	reads, _ := MergeSeconds(c.points, OpRead)
	if reads.TotalCount() != 5 || reads.Max() != 5023 || reads.ValueAtQuantile(50) != 100 {
		t.Errorf("merged reads: %d, max %d, p50 %d", reads.TotalCount(), reads.Max(), reads.ValueAtQuantile(50))
	}
	if a.errs != [numOps]int64{} || b.errs[opInsert] != 1 || a.hists[opRead].TotalCount() != 4 {
		t.Errorf("run-long counters: a %v b %v, a's reads %d", a.errs, b.errs, a.hists[opRead].TotalCount())
	}
}

// TestSecondWithoutOperationsHasNoP99: a second in which an operation
// type had no success, only failures or nothing at all, records its count
// of 0 and no p99 for it, in Go and in the JSON that runs are stored as.
func TestSecondWithoutOperationsHasNoP99(t *testing.T) {
	used := [numOps]bool{true, false, true}
	c := newSeriesCollector(1, used, false)
	th := newWorkloadThread(0, 1, used)
	th.record(opRead, 300*time.Microsecond, nil)
	th.record(opInsert, time.Millisecond, errNoSuchDocument)
	c.flush(th, 2) // second 0: a read and a failed insert; second 1: nothing
	th.record(opInsert, 400*time.Microsecond, nil)
	c.flush(th, math.MaxInt)
	if len(c.points) != 3 {
		t.Fatalf("%d seconds, want 3: %+v", len(c.points), c.points)
	}
	for _, tc := range []struct {
		second   int
		op       string
		measured bool
	}{
		{0, OpRead, true}, {0, OpInsert, false}, {1, OpRead, false}, {1, OpInsert, false}, {2, OpRead, false}, {2, OpInsert, true},
	} {
		p := c.points[tc.second]
		v, ok := p.P99Micros[tc.op]
		if ok != tc.measured || (ok && v <= 0) {
			t.Errorf("second %d, %s: p99 %v (present %t), want present: %t (and then above 0)", tc.second, tc.op, v, ok, tc.measured)
		}
		if n, ok := p.Counts[tc.op]; !ok || (n > 0) != tc.measured {
			t.Errorf("second %d, %s: count %d (present %t): a count of 0 is measured and stays", tc.second, tc.op, n, ok)
		}
	}
	b, err := json.Marshal(c.points[1])
	if err != nil {
		t.Fatal(err)
	}
	if want := `"counts":{"insert":0,"read":0},"p99_micros":{}`; !strings.Contains(string(b), want) {
		t.Errorf("a second without operations as JSON: %s, want it to hold %s", b, want)
	}
}

func TestFailWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name  string
		steps []struct {
			ms       int
			ok, errs int64
		}
		want bool // after the last step
	}{
		{"failing from the start", steps(0, 0, 0, 500, 0, 10, 1000, 0, 20), true},
		{"not yet a second", steps(0, 0, 0, 999, 0, 20), false},
		{"a success resets", steps(500, 0, 10, 900, 1, 15, 1800, 1, 30), false},
		{"failing after a success", steps(500, 1, 10, 1600, 1, 30), true},
		{"a stall is not failing", steps(2000, 0, 0, 5000, 0, 0), false},
		{"successes only", steps(0, 5, 0, 3000, 5, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFailWatch(t0)
			var got bool
			for _, s := range tt.steps {
				got = w.allFailing(at(s.ms), s.ok, s.errs)
			}
			if got != tt.want {
				t.Errorf("allFailing = %v, want %v", got, tt.want)
			}
		})
	}
}

// steps turns (ms, ok, errs) triples into failWatch observations.
func steps(v ...int) []struct {
	ms       int
	ok, errs int64
} {
	var out []struct {
		ms       int
		ok, errs int64
	}
	for i := 0; i+2 < len(v); i += 3 {
		out = append(out, struct {
			ms       int
			ok, errs int64
		}{v[i], int64(v[i+1]), int64(v[i+2])})
	}
	return out
}
