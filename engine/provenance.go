package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/workload"
)

// Provenance is the cache state of a measured step (the fields a
// cold/hot claim needs): what was measured, how caches were cleared, and a verdict. A
// pointer field is nil (null in the record, "–" in tables) when it was not
// measured: a missing figure is never recorded as 0.
type Provenance struct {
	NS             string   `json:"ns,omitempty"`
	DatasetBytes   *int64   `json:"dataset_bytes"`
	StorageBytes   *int64   `json:"storage_bytes"`
	Documents      *int64   `json:"documents"`
	CacheBytes     *int64   `json:"cache_bytes"`
	MemoryBytes    *uint64  `json:"memory_bytes"`
	DatasetMemory  *float64 `json:"dataset_memory_ratio"`
	DatasetCache   *float64 `json:"dataset_cache_ratio"`
	Virtualization string   `json:"virtualization,omitempty"`
	Warmup         string   `json:"warmup"`
	Cleared        string   `json:"cleared"` // drop_caches, restart, drop_caches+restart, none
	DropTried      bool     `json:"drop_tried"`
	Dropped        bool     `json:"dropped"`
	CachedBefore   *uint64  `json:"cached_before"`
	CachedAfter    *uint64  `json:"cached_after"`
	DropReason     string   `json:"drop_reason,omitempty"`
	Round          any      `json:"round,omitempty"`
	ApparentMBps   *float64 `json:"apparent_read_mb_per_s"`
	// Verdict is cold, hot or unknown; empty for a step that measures no
	// reads from a cache (a load), with Reason saying so.
	Verdict string `json:"verdict,omitempty"`
	Reason  string `json:"reason"`
	// Notes say why a field is missing, e.g. "storage_bytes: no checkpoint yet".
	Notes []string `json:"notes,omitempty"`
}

// Verdicts.
const (
	VerdictCold    = "cold"
	VerdictHot     = "hot"
	VerdictUnknown = "unknown"
)

// provenance describes the cache state at the start of a step on srv.
func (r *Run) provenance(ctx context.Context, srv *Server, spec StepSpec) *Provenance {
	p := &Provenance{NS: spec.NS, Warmup: "none", Cleared: "none"}
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
		p.note("memory_bytes: /proc/meminfo could not be read")
	}
	p.Virtualization = r.hostVirt(ctx)
	p.measureDataset(ctx, srv)
	if st, err := srv.ServerStatus(ctx); err == nil {
		p.CacheBytes = lookupIntPtr(st, "wiredTiger", "cache", "maximum bytes configured")
	}
	if p.CacheBytes == nil {
		p.note("cache_bytes: the server reports no WiredTiger cache statistics")
	}
	p.ratios()

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
func (p *Provenance) measureDataset(ctx context.Context, srv *Server) {
	db, coll, ok := strings.Cut(p.NS, ".")
	if !ok {
		p.note("dataset: no namespace (load data first or give the step ns=)")
		return
	}
	cs, err := srv.CommandDB(ctx, db, bson.D{{Key: "collStats", Value: coll}})
	if err != nil {
		p.note(fmt.Sprintf("dataset: collStats %s: %v", p.NS, err))
		return
	}
	p.DatasetBytes = lookupIntPtr(cs, "size")
	p.Documents = lookupIntPtr(cs, "count")
	p.StorageBytes = lookupIntPtr(cs, "storageSize")
	if p.StorageBytes != nil && *p.StorageBytes == 0 && p.DatasetBytes != nil && *p.DatasetBytes > 0 {
		// WiredTiger reports the file size, which stays 0 until the first
		// checkpoint writes the data: not a measure of the data on disk.
		p.StorageBytes = nil
		p.note("storage_bytes: the server reports 0 bytes on disk for a non-empty collection (no checkpoint yet)")
	}
}

func (p *Provenance) note(s string) { p.Notes = append(p.Notes, s) }

// ratios computes data/memory and data/cache where both are known.
func (p *Provenance) ratios() {
	data := p.onDisk()
	if data == nil {
		return
	}
	if p.MemoryBytes != nil && *p.MemoryBytes > 0 {
		v := float64(*data) / float64(*p.MemoryBytes)
		p.DatasetMemory = &v
	}
	if p.CacheBytes != nil && *p.CacheBytes > 0 {
		v := float64(*data) / float64(*p.CacheBytes)
		p.DatasetCache = &v
	}
}

// onDisk is the data set's size on disk (storageSize), else its
// uncompressed size; nil when neither is known.
func (p *Provenance) onDisk() *int64 {
	if p.StorageBytes != nil && *p.StorageBytes > 0 {
		return p.StorageBytes
	}
	return p.DatasetBytes
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
func (r *Run) finishProvenance(p *Provenance, d *ServerDeltas, elapsed time.Duration, result any) {
	if p == nil || d == nil {
		return
	}
	if d.BytesRead != nil && elapsed > 0 {
		v := *d.BytesRead / elapsed.Seconds() / (1 << 20)
		p.ApparentMBps = &v
	}
	if isLoad(result) {
		p.Verdict, p.Reason = "", "a load step writes its data set: a cache verdict applies to steps that read"
		return
	}
	p.Verdict, p.Reason = verdict(p, d)
}

// verdict applies the cold-cache rule: cold only when the data had to come
// from disk: the OS page cache was confirmed dropped (or cannot hold the
// data set) and no cache that could not be cleared can hold it either.
// Evidence that was not measured never counts as zero.
func verdict(p *Provenance, d *ServerDeltas) (string, string) {
	if !d.hasCacheStats() {
		return VerdictUnknown, "the server reports no WiredTiger cache statistics"
	}
	if p.ApparentMBps != nil && *p.ApparentMBps*(1<<20) > memoryBandwidth {
		return VerdictHot, fmt.Sprintf("apparent read bandwidth %.1f GB/s > 5 GB/s: memory, not disk", *p.ApparentMBps/1024)
	}
	data := p.onDisk()
	if *d.PagesRead == 0 && data != nil && *data > 0 {
		return VerdictHot, "WiredTiger read no pages into its cache: the data was already in the WiredTiger cache"
	}
	cached := fmt.Sprintf("Cached %s -> %s", gbOf(p.CachedBefore), gbOf(p.CachedAfter))
	switch {
	case p.Dropped && p.Virtualization != "" && p.Virtualization != "none":
		return VerdictUnknown, fmt.Sprintf("drop_caches confirmed (%s), but the host is virtualised (%s): a cache below it cannot be cleared from inside", cached, p.Virtualization)
	case p.Dropped:
		return VerdictCold, fmt.Sprintf("drop_caches confirmed (%s) right before the step, and WiredTiger read %.0f pages", cached, *d.PagesRead)
	case data == nil || p.MemoryBytes == nil:
		return VerdictUnknown, "the data set's size or the host's memory is not known"
	case uint64(*data) > *p.MemoryBytes:
		return VerdictCold, fmt.Sprintf("dataset %s > memory %s: the OS page cache cannot hold it", gbOf(data), gbOf(p.MemoryBytes))
	case p.DropTried:
		return VerdictHot, fmt.Sprintf("dataset %s < memory %s and drop_caches did not happen (%s): the OS page cache can hold it all", gbOf(data), gbOf(p.MemoryBytes), p.DropReason)
	}
	return VerdictHot, fmt.Sprintf("dataset %s < memory %s and caches were not dropped: the OS page cache can hold it all", gbOf(data), gbOf(p.MemoryBytes))
}

// isLoad reports whether a step's result is a load's (documents inserted
// in batches) rather than a workload's.
func isLoad(result any) bool {
	switch r := result.(type) {
	case workload.LoadResult, *workload.LoadResult:
		return true
	case map[string]any:
		_, batch := r["batch"]
		_, docs := r["docs_per_sec"]
		return batch && docs
	}
	return false
}

// RepetitionStats summarises repeated steps (same name and labels but the
// round): min, median and max of a value.
type RepetitionStats struct {
	N                int
	Min, Median, Max float64
}

// Summarise returns min/median/max of vals.
func Summarise(vals []float64) RepetitionStats {
	if len(vals) == 0 {
		return RepetitionStats{}
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return RepetitionStats{N: len(s), Min: s[0], Median: med, Max: s[len(s)-1]}
}
