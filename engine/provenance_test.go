package engine

import (
	"strings"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/workload"
)

func i64(n int64) *int64       { return &n }
func u64(n uint64) *uint64     { return &n }
func f64(f float64) *float64   { return &f }
func pages(n float64) *float64 { return &n }

// TestVerdict covers each rule of the verdict with its reason: what the
// record says must follow from what was measured, and nothing unmeasured
// may count as zero.
func TestVerdict(t *testing.T) {
	const gib = 1 << 30
	base := func() record.Provenance {
		return record.Provenance{StorageBytes: i64(gib), DatasetBytes: i64(2 * gib), MemoryBytes: u64(8 * gib)}
	}
	with := func(f func(*record.Provenance)) record.Provenance { p := base(); f(&p); return p }
	read := record.ServerDeltas{PagesRead: pages(10)}
	for _, tc := range []struct {
		name   string
		p      record.Provenance
		d      record.ServerDeltas
		want   string
		reason string
	}{
		{"memory bandwidth", with(func(p *record.Provenance) { p.ApparentMBps = f64(9 * 1024) }), read, "hot", "apparent read bandwidth 9.0 GB/s > 5 GB/s"},
		{"bandwidth below memory's", with(func(p *record.Provenance) { p.ApparentMBps = f64(4 * 1024) }), read, "hot", "caches were not dropped"},
		{"no pages read", base(), record.ServerDeltas{PagesRead: pages(0)}, "hot", "WiredTiger read no pages"},
		{"no WiredTiger statistics", base(), record.ServerDeltas{}, "unknown", "the server reports no WiredTiger cache statistics"},
		{"no WiredTiger statistics, dropped", with(func(p *record.Provenance) { p.Dropped, p.DropTried = true, true }), record.ServerDeltas{}, "unknown", "no WiredTiger cache statistics"},
		{"dropped on bare metal", with(func(p *record.Provenance) {
			p.Dropped, p.DropTried, p.CachedBefore, p.CachedAfter = true, true, u64(3*gib), u64(gib/2)
		}), read, "cold", "drop_caches confirmed (Cached 3.00 GB -> 0.50 GB) right before the step, and WiredTiger read 10 pages"},
		{"dropped, Cached not read", with(func(p *record.Provenance) { p.Dropped, p.DropTried = true, true }), read, "cold", "Cached unknown -> unknown"},
		{"dropped in a VM", with(func(p *record.Provenance) {
			p.Dropped, p.DropTried, p.Virtualization = true, true, "kvm"
		}), read, "unknown", "the host is virtualised (kvm)"},
		{"dropped, virtualisation none", with(func(p *record.Provenance) {
			p.Dropped, p.DropTried, p.Virtualization = true, true, "none"
		}), read, "cold", "drop_caches confirmed"},
		{"bigger than memory", with(func(p *record.Provenance) { p.StorageBytes = i64(16 * gib) }), read, "cold", "dataset 16.00 GB > memory 8.00 GB"},
		{"storage unknown, data bigger than memory", with(func(p *record.Provenance) { p.StorageBytes, p.DatasetBytes = nil, i64(9*gib) }), read, "cold", "dataset 9.00 GB > memory 8.00 GB"},
		{"drop refused", with(func(p *record.Provenance) { p.DropTried, p.DropReason = true, "drop_caches needs root" }), read, "hot", "drop_caches did not happen (drop_caches needs root)"},
		{"not dropped", base(), read, "hot", "dataset 1.00 GB < memory 8.00 GB and caches were not dropped"},
		{"memory unknown", with(func(p *record.Provenance) { p.MemoryBytes = nil }), read, "unknown", "the data set's size or the host's memory is not known"},
		{"dataset unknown", with(func(p *record.Provenance) { p.StorageBytes, p.DatasetBytes = nil, nil }), read, "unknown", "not known"},
	} {
		got, reason := verdict(&tc.p, &tc.d)
		if got != tc.want || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: verdict %s (%s), want %s (%s)", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}

// TestApparentBandwidthUnits pins the unit of the apparent read rate: MiB
// per second, compared with 5 GiB/s of memory bandwidth.
func TestApparentBandwidthUnits(t *testing.T) {
	r := &Run{}
	for _, tc := range []struct {
		bytes   float64
		elapsed time.Duration
		mbps    float64
		verdict string
	}{
		{6 << 30, time.Second, 6 * 1024, "hot"},        // 6 GiB/s: memory
		{4 << 30, time.Second, 4 * 1024, "cold"},       // 4 GiB/s: could be disk
		{100 << 20, 2 * time.Second, 50, "cold"},       // 50 MiB/s
		{(5 << 30) + 1<<20, time.Second, 5121, "hot"},  // just above
		{(5 << 30) - 1<<20, time.Second, 5119, "cold"}, // just below
	} {
		p := &record.Provenance{StorageBytes: i64(16 << 30), MemoryBytes: u64(8 << 30)}
		r.finishProvenance(p, &record.ServerDeltas{PagesRead: pages(100), BytesRead: f64(tc.bytes)}, tc.elapsed, nil)
		if p.ApparentMBps == nil || *p.ApparentMBps != tc.mbps || p.Verdict != tc.verdict {
			t.Errorf("%.0f bytes in %s: %v MB/s %s (%s), want %v MB/s %s", tc.bytes, tc.elapsed, p.ApparentMBps, p.Verdict, p.Reason, tc.mbps, tc.verdict)
		}
	}
}

// TestLoadStepHasNoVerdict: a load writes its data set; a cache verdict
// computed from before the data existed would be a made-up claim.
func TestLoadStepHasNoVerdict(t *testing.T) {
	r := &Run{}
	for _, result := range []any{
		workload.LoadResult{Docs: 1000},
		map[string]any{"docs": 1000.0, "docs_per_sec": 5e4, "batch": map[string]any{"p50_micros": 900.0}},
	} {
		p := &record.Provenance{StorageBytes: i64(0), MemoryBytes: u64(8 << 30)}
		r.finishProvenance(p, &record.ServerDeltas{PagesRead: pages(0), BytesRead: f64(0)}, time.Second, result)
		if p.Verdict != "" || !strings.Contains(p.Reason, "load step") {
			t.Errorf("%T: verdict %q (%s), want none", result, p.Verdict, p.Reason)
		}
	}
	p := &record.Provenance{StorageBytes: i64(1 << 30), MemoryBytes: u64(8 << 30)}
	r.finishProvenance(p, &record.ServerDeltas{PagesRead: pages(5), BytesRead: f64(1 << 20)}, time.Second, workload.Result{})
	if p.Verdict != "hot" {
		t.Errorf("workload step verdict %q (%s)", p.Verdict, p.Reason)
	}
}

func TestClearedBy(t *testing.T) {
	for _, tc := range []struct {
		dropped, restarted bool
		want               string
	}{
		{false, false, "none"}, {true, false, "drop_caches"}, {false, true, "restart"}, {true, true, "drop_caches+restart"},
	} {
		if got := clearedBy(tc.dropped, tc.restarted); got != tc.want {
			t.Errorf("dropped %v restarted %v: %s, want %s", tc.dropped, tc.restarted, got, tc.want)
		}
	}
}
