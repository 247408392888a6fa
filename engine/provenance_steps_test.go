package engine

import (
	"context"
	"testing"

	"wtd/engine/record"
	"wtd/engine/workload"
	"wtd/internal/testhost"
)

// TestClearedAcrossSteps: how caches were cleared is worked out per step
// from what happened since the previous one: the server's start, a
// restart, a drop (confirmed or refused), or nothing.
func TestClearedAcrossSteps(t *testing.T) {
	ctx := context.Background()
	host := testhost.New(t)
	uid := 0
	host.EUID = func() int { return uid }
	r, _, _ := startTestRun(t, Config{Host: host, MongodBinary: startTestServerBinary(t)})
	s, err := r.StartServer(ctx, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, workload.LoadSpec{NS: "p.c", Docs: 500, DocBytes: 200}, nil); err != nil {
		t.Fatal(err)
	}
	step := func(name string) *record.Provenance {
		t.Helper()
		rec, err := r.Step(ctx, StepSpec{Name: name}, func(ctx context.Context) (any, error) {
			return s.Workload(ctx, workload.Spec{NS: "p.c", Ops: 50, Mix: workload.Mix{Read: 1}, KeySpace: 500}, nil)
		})
		if err != nil || rec.Provenance == nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rec.Provenance
	}
	restart := func() {
		t.Helper()
		if err := s.Restart(ctx, ServerChanges{}); err != nil {
			t.Fatal(err)
		}
	}
	type want struct {
		cleared           string
		tried, dropped    bool
		reasonHasNeedRoot bool
	}
	check := func(name string, p *record.Provenance, w want) {
		t.Helper()
		if p.Cleared != w.cleared || p.DropTried != w.tried || p.Dropped != w.dropped {
			t.Errorf("%s: cleared %q tried %v dropped %v, want %q %v %v", name, p.Cleared, p.DropTried, p.Dropped, w.cleared, w.tried, w.dropped)
		}
		if w.tried && (p.CachedBefore == nil || p.CachedAfter == nil) {
			t.Errorf("%s: Cached before/after not recorded", name)
		}
		if w.reasonHasNeedRoot && p.DropReason != "drop_caches needs root: running as uid 1000" {
			t.Errorf("%s: drop reason %q", name, p.DropReason)
		}
	}

	check("first step after the start", step("s1"), want{cleared: "restart"})
	r.DropCaches(ctx)
	check("after a drop", step("s2"), want{cleared: "drop_caches", tried: true, dropped: true})
	check("nothing since", step("s3"), want{cleared: "none"})
	restart()
	check("after a restart", step("s4"), want{cleared: "restart"})
	r.DropCaches(ctx)
	restart()
	check("after a drop and a restart", step("s5"), want{cleared: "drop_caches+restart", tried: true, dropped: true})
	uid = 1000
	r.DropCaches(ctx)
	check("after a refused drop", step("s6"), want{cleared: "none", tried: true, reasonHasNeedRoot: true})
	if !testhost.Dropped(t, host) {
		t.Error("the drop never reached drop_caches")
	}
}
