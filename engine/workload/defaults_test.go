package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fixedStats answers collStats with the same figures for every namespace
// and remembers which it was asked about.
type fixedStats struct {
	count int64
	avg   float64
	err   error
	asked []string
}

func (f *fixedStats) CollectionStats(_ context.Context, ns string) (int64, float64, error) {
	f.asked = append(f.asked, ns)
	return f.count, f.avg, f.err
}

func TestCompleteTakesWhatAPlaybookLeavesOut(t *testing.T) {
	ctx := context.Background()
	var loads Loads
	loads.Note(LoadSpec{NS: "a.c", DocBytes: 300})
	loads.Note(LoadSpec{NS: "b.c", DocBytes: 500})
	all := Defaults{KeySpace: true, DocBytes: true}
	for _, tc := range []struct {
		name  string
		spec  Spec
		d     Defaults
		want  Spec
		stats fixedStats
	}{
		{"the last load's namespace and size, collStats' count", Spec{Ops: 5}, all,
			Spec{NS: "b.c", Ops: 5, KeySpace: 1000, DocBytes: 500}, fixedStats{count: 1000, avg: 480.4}},
		{"an earlier load's size for its namespace", Spec{NS: "a.c"}, all,
			Spec{NS: "a.c", KeySpace: 1000, DocBytes: 300}, fixedStats{count: 1000, avg: 280}},
		{"collStats' average where nothing was loaded", Spec{NS: "x.c"}, all,
			Spec{NS: "x.c", KeySpace: 7, DocBytes: 281}, fixedStats{count: 7, avg: 280.6}},
		{"given values are kept, 0 too", Spec{NS: "a.c", KeySpace: 0, DocBytes: 64}, Defaults{},
			Spec{NS: "a.c", KeySpace: 0, DocBytes: 64}, fixedStats{count: 1000, avg: 280}},
		{"a working set as a fraction of the given key space", Spec{NS: "a.c", KeySpace: 200, DocBytes: 64},
			Defaults{WorkingSet: &WorkingSet{Size: 0.25, Unit: UnitFraction}},
			Spec{NS: "a.c", KeySpace: 200, DocBytes: 64, WorkingSetKeys: 50}, fixedStats{count: 1000, avg: 280}},
		{"a working set in MB over collStats' average", Spec{NS: "x.c"},
			Defaults{KeySpace: true, WorkingSet: &WorkingSet{Size: 1, Unit: UnitMB}},
			Spec{NS: "x.c", KeySpace: 1 << 20, WorkingSetKeys: 1024}, fixedStats{count: 1 << 20, avg: 1024}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Complete(ctx, &tc.stats, &loads, tc.spec, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if got.NS != tc.want.NS || got.Ops != tc.want.Ops || got.KeySpace != tc.want.KeySpace ||
				got.DocBytes != tc.want.DocBytes || got.WorkingSetKeys != tc.want.WorkingSetKeys {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if len(tc.stats.asked) != 1 || tc.stats.asked[0] != tc.want.NS {
				t.Errorf("collStats asked about %v, want %s once", tc.stats.asked, tc.want.NS)
			}
		})
	}
}

func TestCompleteErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Complete(ctx, &fixedStats{}, nil, Spec{}, Defaults{}); !errors.Is(err, ErrNoNamespace) {
		t.Errorf("no ns and no load: %v, want ErrNoNamespace", err)
	}
	var empty Loads
	if _, err := Complete(ctx, &fixedStats{}, &empty, Spec{}, Defaults{}); !errors.Is(err, ErrNoNamespace) {
		t.Errorf("no ns before any load: %v, want ErrNoNamespace", err)
	}
	down := errors.New("collStats a.c: connection refused")
	if _, err := Complete(ctx, &fixedStats{err: down}, nil, Spec{NS: "a.c"}, Defaults{KeySpace: true}); !errors.Is(err, down) {
		t.Errorf("collStats failing: %v", err)
	}
	_, err := Complete(ctx, &fixedStats{count: 10, avg: 100}, nil, Spec{NS: "a.c"},
		Defaults{KeySpace: true, WorkingSet: &WorkingSet{Size: 2, Unit: UnitFraction}})
	if err == nil || !strings.Contains(err.Error(), "working set 2 out of range (0, 1]") {
		t.Errorf("working set 2 as a fraction: %v", err)
	}
}

func TestLoadsRemembers(t *testing.T) {
	var nilLoads *Loads
	if ns := nilLoads.Last(); ns != "" {
		t.Errorf("a nil Loads' last namespace %q", ns)
	}
	if _, ok := nilLoads.DocBytes("a.c"); ok {
		t.Error("a nil Loads has a document size")
	}
	var l Loads
	l.Note(LoadSpec{NS: "a.c", DocBytes: 100})
	l.Note(LoadSpec{NS: "b.c", DocBytes: 200})
	l.Note(LoadSpec{NS: "a.c", DocBytes: 300})
	if n, ok := l.DocBytes("a.c"); l.Last() != "a.c" || !ok || n != 300 {
		t.Errorf("last %q, a.c's size %d %v: want a.c and its last load's 300", l.Last(), n, ok)
	}
	if n, ok := l.DocBytes("b.c"); !ok || n != 200 {
		t.Errorf("b.c's size %d %v", n, ok)
	}
}
