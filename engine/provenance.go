package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Provenance is the cache state of a measured step (DESIGN.md, SEEDS.md
// 002): what was measured, how caches were cleared, and a verdict.
type Provenance struct {
	NS             string  `json:"ns,omitempty"`
	DatasetBytes   int64   `json:"dataset_bytes"`
	StorageBytes   int64   `json:"storage_bytes"`
	Documents      int64   `json:"documents"`
	CacheBytes     int64   `json:"cache_bytes"`
	MemoryBytes    uint64  `json:"memory_bytes"`
	DatasetMemory  float64 `json:"dataset_memory_ratio"`
	DatasetCache   float64 `json:"dataset_cache_ratio"`
	Virtualization string  `json:"virtualization,omitempty"`
	Warmup         string  `json:"warmup"`
	Cleared        string  `json:"cleared"` // drop_caches, restart, drop_caches+restart, none
	DropTried      bool    `json:"drop_tried"`
	Dropped        bool    `json:"dropped"`
	CachedBefore   uint64  `json:"cached_before,omitempty"`
	CachedAfter    uint64  `json:"cached_after,omitempty"`
	DropReason     string  `json:"drop_reason,omitempty"`
	Round          any     `json:"round,omitempty"`
	ApparentMBps   float64 `json:"apparent_read_mb_per_s,omitempty"`
	Verdict        string  `json:"verdict"` // cold, hot, unknown
	Reason         string  `json:"reason"`
}

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
	if mi, err := r.cfg.Host.Meminfo(); err == nil {
		p.MemoryBytes = mi.MemTotal
	}
	if facts := r.hostVirt(ctx); facts != "" {
		p.Virtualization = facts
	}
	if db, coll, ok := strings.Cut(p.NS, "."); ok {
		if cs, err := srv.CommandDB(ctx, db, bson.D{{Key: "collStats", Value: coll}}); err == nil {
			p.DatasetBytes = lookupInt(cs, "size")
			p.StorageBytes = lookupInt(cs, "storageSize")
			p.Documents = lookupInt(cs, "count")
		}
	}
	if st, err := srv.ServerStatus(ctx); err == nil {
		p.CacheBytes = lookupInt(st, "wiredTiger", "cache", "maximum bytes configured")
	}
	if p.MemoryBytes > 0 {
		p.DatasetMemory = float64(p.onDisk()) / float64(p.MemoryBytes)
	}
	if p.CacheBytes > 0 {
		p.DatasetCache = float64(p.onDisk()) / float64(p.CacheBytes)
	}
	prevEnd := r.start
	prevRestarts := 0
	r.mu.Lock()
	if n := len(r.steps); n > 0 {
		prevEnd = r.steps[n-1].End
	}
	if r.restartsAt != nil {
		prevRestarts = r.restartsAt[srv]
	}
	drop := r.lastDrop
	r.mu.Unlock()
	restarted := srv.restartCount() > prevRestarts || (len(r.Steps()) == 0)
	if drop != nil && !drop.At.Before(prevEnd) {
		p.DropTried, p.Dropped = true, drop.Dropped
		p.CachedBefore, p.CachedAfter, p.DropReason = drop.CachedBefore, drop.CachedAfter, drop.Reason
	}
	switch {
	case p.Dropped && restarted:
		p.Cleared = "drop_caches+restart"
	case p.Dropped:
		p.Cleared = "drop_caches"
	case restarted:
		p.Cleared = "restart"
	}
	return p
}

func (p *Provenance) onDisk() int64 {
	if p.StorageBytes > 0 {
		return p.StorageBytes
	}
	return p.DatasetBytes
}

func lookupInt(doc bson.Raw, path ...string) int64 {
	v, err := doc.LookupErr(path...)
	if err != nil {
		return 0
	}
	if n, ok := v.AsInt64OK(); ok {
		return n
	}
	f, _ := v.AsFloat64OK()
	return int64(f)
}

func gb(b float64) string { return fmt.Sprintf("%.2f GB", b/(1<<30)) }

// memoryBandwidth is where an apparent read rate can only be memory.
const memoryBandwidth = 5 << 30

// finishProvenance completes the verdict with the step's evidence: the
// pages WiredTiger read and the apparent read bandwidth.
func (r *Run) finishProvenance(p *Provenance, d *ServerDeltas, elapsed time.Duration) {
	if p == nil || d == nil {
		return
	}
	if elapsed > 0 {
		p.ApparentMBps = d.BytesRead / elapsed.Seconds() / (1 << 20)
	}
	p.Verdict, p.Reason = verdict(p, d)
}

// verdict applies SEEDS.md 002's rule: cold only when the data had to come
// from disk: the OS page cache was confirmed dropped (or cannot hold the
// data set) and no cache that could not be cleared can hold it either.
func verdict(p *Provenance, d *ServerDeltas) (string, string) {
	data := float64(p.onDisk())
	mem := float64(p.MemoryBytes)
	bw := p.ApparentMBps * (1 << 20)
	switch {
	case bw > memoryBandwidth:
		return "hot", fmt.Sprintf("apparent read bandwidth %.1f GB/s > 5 GB/s: memory, not disk", bw/(1<<30))
	case d.PagesRead == 0 && data > 0:
		return "hot", "WiredTiger read no pages into its cache: the data was already in the WiredTiger cache"
	case p.Dropped && p.Virtualization != "" && p.Virtualization != "none":
		return "unknown", fmt.Sprintf("drop_caches confirmed (Cached %s -> %s), but the host is virtualised (%s): a cache below it cannot be cleared from inside", gb(float64(p.CachedBefore)), gb(float64(p.CachedAfter)), p.Virtualization)
	case p.Dropped:
		return "cold", fmt.Sprintf("drop_caches confirmed (Cached %s -> %s) right before the step, and WiredTiger read %.0f pages", gb(float64(p.CachedBefore)), gb(float64(p.CachedAfter)), d.PagesRead)
	case mem > 0 && data > mem:
		return "cold", fmt.Sprintf("dataset %s > memory %s: the OS page cache cannot hold it", gb(data), gb(mem))
	case mem > 0 && p.DropTried:
		return "hot", fmt.Sprintf("dataset %s < memory %s and drop_caches did not happen (%s): the OS page cache can hold it all", gb(data), gb(mem), p.DropReason)
	case mem > 0:
		return "hot", fmt.Sprintf("dataset %s < memory %s and caches were not dropped: the OS page cache can hold it all", gb(data), gb(mem))
	}
	return "unknown", "no dataset or memory size known"
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
