package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
	"wtd/engine/record"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// provenance describes the cache state at the start of a step on srv.
func (r *Run) provenance(ctx context.Context, srv *Server, spec StepSpec) *record.Provenance {
	p := &record.Provenance{NS: spec.NS, Warmup: "none", Cleared: "none"}
	if p.NS == "" {
		p.NS = r.lastNS()
	}
	if w, ok := spec.Labels["warmup"]; ok {
		p.Warmup = fmt.Sprint(w)
	}
	p.Round = spec.Labels["round"]
	if mi, err := r.cfg.Host.Meminfo(); err == nil && mi.MemTotal > 0 {
		p.MemoryBytes = &mi.MemTotal
	} else {
		p.Note("memory_bytes: /proc/meminfo could not be read")
	}
	p.Virtualization = r.hostVirt(ctx)
	measureDataset(ctx, p, srv)
	if st, err := srv.ServerStatus(ctx); err == nil {
		p.CacheBytes = lookupIntPtr(st, "wiredTiger", "cache", "maximum bytes configured")
	}
	if p.CacheBytes == nil {
		p.Note("cache_bytes: the server reports no WiredTiger cache statistics")
	}
	p.Ratios()

	prevEnd := r.start
	r.mu.Lock()
	if n := len(r.steps); n > 0 {
		prevEnd = r.steps[n-1].End
	}
	startsBefore := r.restartsAt[srv]
	drop := r.lastDrop
	r.mu.Unlock()
	// A server wtd started (or restarted) since its last step has an empty
	// WiredTiger cache; one it attached to was never restarted by wtd.
	restarted := srv.startCount() > startsBefore
	if drop != nil && !drop.At.Before(prevEnd) {
		p.DropTried, p.Dropped = true, drop.Dropped
		p.CachedBefore, p.CachedAfter, p.DropReason = drop.CachedBefore, drop.CachedAfter, drop.Reason
	}
	p.Cleared = clearedBy(p.Dropped, restarted)
	return p
}

// clearedBy names how caches were cleared before a step.
func clearedBy(dropped, restarted bool) string {
	switch {
	case dropped && restarted:
		return "drop_caches+restart"
	case dropped:
		return "drop_caches"
	case restarted:
		return "restart"
	}
	return "none"
}

// measureDataset reads the data set's size and count from collStats.
func measureDataset(ctx context.Context, p *record.Provenance, srv *Server) {
	db, coll, ok := strings.Cut(p.NS, ".")
	if !ok {
		p.Note("dataset: no namespace (load data first or give the step ns=)")
		return
	}
	cs, err := srv.CommandDB(ctx, db, bson.D{{Key: "collStats", Value: coll}})
	if err != nil {
		p.Note(fmt.Sprintf("dataset: collStats %s: %v", p.NS, err))
		return
	}
	p.DatasetBytes = lookupIntPtr(cs, "size")
	p.Documents = lookupIntPtr(cs, "count")
	p.StorageBytes = lookupIntPtr(cs, "storageSize")
	if p.StorageBytes != nil && *p.StorageBytes == 0 && p.DatasetBytes != nil && *p.DatasetBytes > 0 {
		// WiredTiger reports the file size, which stays 0 until the first
		// checkpoint writes the data: not a measure of the data on disk.
		p.StorageBytes = nil
		p.Note("storage_bytes: the server reports 0 bytes on disk for a non-empty collection (no checkpoint yet)")
	}
}

func lookupInt(doc bson.Raw, path ...string) int64 {
	if v := lookupIntPtr(doc, path...); v != nil {
		return *v
	}
	return 0
}

// lookupIntPtr returns a numeric field as int64, nil when it is absent or
// not a number.
func lookupIntPtr(doc bson.Raw, path ...string) *int64 {
	v, err := doc.LookupErr(path...)
	if err != nil {
		return nil
	}
	if n, ok := v.AsInt64OK(); ok {
		return &n
	}
	if f, ok := v.AsFloat64OK(); ok {
		n := int64(f)
		return &n
	}
	return nil
}

func gb(b float64) string { return fmt.Sprintf("%.2f GB", b/(1<<30)) }

// gbOf words an optional byte count.
func gbOf[T int64 | uint64](p *T) string {
	if p == nil {
		return "unknown"
	}
	return gb(float64(*p))
}

// memoryBandwidth is where an apparent read rate can only be memory
// (bytes per second).
const memoryBandwidth = 5 << 30

// finishProvenance completes the verdict with the step's evidence: the
// pages WiredTiger read and the apparent read bandwidth. A load step gets
// no verdict: it writes its data set rather than reading it from a cache.
func (r *Run) finishProvenance(p *record.Provenance, d *record.ServerDeltas, elapsed time.Duration, result any) {
	if p == nil || d == nil {
		return
	}
	if d.BytesRead != nil && elapsed > 0 {
		v := *d.BytesRead / elapsed.Seconds() / (1 << 20)
		p.ApparentMBps = &v
	}
	if record.IsLoad(result) {
		p.Verdict, p.Reason = "", "a load step writes its data set: a cache verdict applies to steps that read"
		return
	}
	p.Verdict, p.Reason = verdict(p, d)
}

// verdict applies the cold-cache rule: cold only when the data had to come
// from disk: the OS page cache was confirmed dropped (or cannot hold the
// data set) and no cache that could not be cleared can hold it either.
// Evidence that was not measured never counts as zero.
func verdict(p *record.Provenance, d *record.ServerDeltas) (string, string) {
	if !d.HasCacheStats() {
		return record.VerdictUnknown, "the server reports no WiredTiger cache statistics"
	}
	if p.ApparentMBps != nil && *p.ApparentMBps*(1<<20) > memoryBandwidth {
		return record.VerdictHot, fmt.Sprintf("apparent read bandwidth %.1f GB/s > 5 GB/s: memory, not disk", *p.ApparentMBps/1024)
	}
	data := p.OnDisk()
	if *d.PagesRead == 0 && data != nil && *data > 0 {
		return record.VerdictHot, "WiredTiger read no pages into its cache: the data was already in the WiredTiger cache"
	}
	cached := fmt.Sprintf("Cached %s -> %s", gbOf(p.CachedBefore), gbOf(p.CachedAfter))
	switch {
	case p.Dropped && p.Virtualization != "" && p.Virtualization != "none":
		return record.VerdictUnknown, fmt.Sprintf("drop_caches confirmed (%s), but the host is virtualised (%s): a cache below it cannot be cleared from inside", cached, p.Virtualization)
	case p.Dropped:
		return record.VerdictCold, fmt.Sprintf("drop_caches confirmed (%s) right before the step, and WiredTiger read %.0f pages", cached, *d.PagesRead)
	case data == nil || p.MemoryBytes == nil:
		return record.VerdictUnknown, "the data set's size or the host's memory is not known"
	case uint64(*data) > *p.MemoryBytes:
		return record.VerdictCold, fmt.Sprintf("dataset %s > memory %s: the OS page cache cannot hold it", gbOf(data), gbOf(p.MemoryBytes))
	case p.DropTried:
		return record.VerdictHot, fmt.Sprintf("dataset %s < memory %s and drop_caches did not happen (%s): the OS page cache can hold it all", gbOf(data), gbOf(p.MemoryBytes), p.DropReason)
	}
	return record.VerdictHot, fmt.Sprintf("dataset %s < memory %s and caches were not dropped: the OS page cache can hold it all", gbOf(data), gbOf(p.MemoryBytes))
}
