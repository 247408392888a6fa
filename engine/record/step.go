package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// StepRecord is a finished step as the run keeps it for reports.
type StepRecord struct {
	ID         int64          `json:"id"`
	Seq        int            `json:"seq"`
	Name       string         `json:"name"`
	Labels     map[string]any `json:"labels,omitempty"`
	Start      time.Time      `json:"start"`
	End        time.Time      `json:"end"`
	Status     string         `json:"status"`
	Error      string         `json:"error,omitempty"`
	Settings   *Settings      `json:"settings,omitempty"`
	Provenance *Provenance    `json:"provenance,omitempty"`
	Result     any            `json:"result,omitempty"`
	Server     *ServerDeltas  `json:"server,omitempty"`
	// Host is how busy the host was during the step (nil: not sampled).
	Host *HostLoad `json:"host_load,omitempty"`
	// ServerSeconds are the server's per-second figures of a step over a
	// server wtd did not load (an imported run's); nil otherwise.
	ServerSeconds *ServerSeconds `json:"server_seconds,omitempty"`
}

// Settings are the server settings in force, from getCmdLineOpts and
// getParameter: the knobs (hostctl.Settings, by their options' names) as
// the server parsed them, the cache's size and what the server says.
type Settings struct {
	hostctl.Settings
	CacheMaxBytes int64          `json:"cache_max_bytes,omitempty"`
	Argv          []string       `json:"argv,omitempty"`
	Parsed        any            `json:"parsed,omitempty"`
	Parameters    map[string]any `json:"parameters,omitempty"`
}

// UnmarshalJSON reads a step's recorded settings, those recorded before
// the knobs took their options' names too ("cache_size_gb",
// "engine_config", "sync_delay").
func (st *Settings) UnmarshalJSON(b []byte) error {
	type plain Settings
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var old struct {
		CacheSizeGB  *float64 `json:"cache_size_gb"`
		EngineConfig *string  `json:"engine_config"`
		SyncDelay    *float64 `json:"sync_delay"`
	}
	if err := json.Unmarshal(b, &old); err == nil {
		if old.CacheSizeGB != nil && p.CacheSizeGB == 0 {
			p.CacheSizeGB = *old.CacheSizeGB
		}
		if old.EngineConfig != nil && p.EngineConfig == "" {
			p.EngineConfig = *old.EngineConfig
		}
		if old.SyncDelay != nil && p.SyncDelay == 0 {
			p.SyncDelay = *old.SyncDelay
		}
	}
	*st = Settings(p)
	return nil
}

// ServerDeltas are the server-side changes over a step. A field is nil
// (null in the record, "–" in tables) when the server does not report the
// metric: a counter it lacks is not measured, never a zero.
type ServerDeltas struct {
	PagesRead         *float64           `json:"pages_read"`
	BytesRead         *float64           `json:"bytes_read"`
	EvictedUnmodified *float64           `json:"evicted_unmodified"`
	EvictedModified   *float64           `json:"evicted_modified"`
	AppThreadEvicted  *float64           `json:"app_thread_evicted"`
	AppEvictMicros    *float64           `json:"app_thread_evict_micros"`
	CacheUsedPeak     *float64           `json:"cache_used_peak"`
	DirtyPeak         *float64           `json:"dirty_peak"`
	CacheMax          *float64           `json:"cache_max"`
	Opcounters        map[string]float64 `json:"opcounters,omitempty"`
	// PerOp is what older runs recorded as pages read per operation of
	// each type (all pages over that type's count): read back, no longer
	// written. Pages read per operation is MeasuresOf's PagesReadPerOp.
	PerOp map[string]float64 `json:"per_op,omitempty"`
}

// AppThreadEvictMetric is the time application threads spent evicting,
// as mongod reports it up to 7.0; AppThreadEvictMetric8 is where 8.0 moved
// it. AppThreadEvictMetrics are both, the older first.
const (
	AppThreadEvictMetric  = "wiredTiger.thread-yield.application thread time evicting (usecs)"
	AppThreadEvictMetric8 = "wiredTiger.cache.application thread time evicting (usecs)"
)

// AppThreadEvictMetrics are the names of the application threads' eviction
// time, one of which a server reports.
var AppThreadEvictMetrics = []string{AppThreadEvictMetric, AppThreadEvictMetric8}

// HasCacheStats reports whether the server reported WiredTiger's cache
// statistics over the step.
func (d *ServerDeltas) HasCacheStats() bool { return d != nil && d.PagesRead != nil }

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

// Note adds a note saying why a field is missing.
func (p *Provenance) Note(s string) { p.Notes = append(p.Notes, s) }

// Ratios computes data/memory and data/cache where both are known.
func (p *Provenance) Ratios() {
	data := p.OnDisk()
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

// OnDisk is the data set's size on disk (storageSize), else its
// uncompressed size; nil when neither is known.
func (p *Provenance) OnDisk() *int64 {
	if p.StorageBytes != nil && *p.StorageBytes > 0 {
		return p.StorageBytes
	}
	return p.DatasetBytes
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

// HostLoad is how busy the host was during a step, from the host samples
// taken during it: means over the samples. A field the samples lacked is
// nil (not measured), never 0.
type HostLoad struct {
	Samples int      `json:"samples"`
	Cores   *float64 `json:"cores"`
	Load1   *float64 `json:"load1"` // the 1-minute load average
	// BusyPct is the CPU in use (not idle, not waiting for I/O), in
	// percent of all the host's CPUs.
	BusyPct *float64 `json:"busy_pct"`
	// OthersCPUPct is the part of BusyPct that neither wtd nor the servers
	// the run watches used: other processes' work (and the kernel's).
	OthersCPUPct *float64 `json:"others_cpu_pct"`
	// StealPct is the time a hypervisor gave the host's CPUs to others.
	StealPct *float64 `json:"steal_pct"`
	// OthersIOBytesPerSec is the disks' reads and writes that neither wtd
	// nor the watched servers made, in bytes a second.
	OthersIOBytesPerSec *float64 `json:"others_io_bytes_per_sec"`
}

// Thresholds past which a step's host counts as busy: its figures then
// depend on other work as much as on what the step measured.
const (
	BusyOthersCPUPct = 25.0 // other processes used a quarter of the host's CPU
	BusyStealPct     = 10.0
	BusyOthersIO     = 20e6 // 20 MB/s of other processes' disk traffic
)

// Busy says why the host was too busy during the step for its figures to
// be compared ("" when it was not, or was not measured).
func (h *HostLoad) Busy() string {
	if h == nil || h.Samples == 0 {
		return ""
	}
	var why []string
	if h.OthersCPUPct != nil && *h.OthersCPUPct >= BusyOthersCPUPct {
		why = append(why, fmt.Sprintf("%.0f%% CPU by other processes", *h.OthersCPUPct))
	}
	if h.StealPct != nil && *h.StealPct >= BusyStealPct {
		why = append(why, fmt.Sprintf("%.0f%% CPU stolen by the hypervisor", *h.StealPct))
	}
	if h.OthersIOBytesPerSec != nil && *h.OthersIOBytesPerSec >= BusyOthersIO {
		why = append(why, fmt.Sprintf("%.0f MB/s of other processes' disk I/O", *h.OthersIOBytesPerSec/1e6))
	}
	if len(why) == 0 {
		return ""
	}
	if h.Load1 != nil && h.Cores != nil {
		why = append([]string{fmt.Sprintf("load %.1f on %.0f cores", *h.Load1, *h.Cores)}, why...)
	}
	return strings.Join(why, ", ")
}

// Run statuses.
const (
	StatusRunning = "running"
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusAborted = "aborted"
)

// IsLoad reports whether a step's result is a load's (documents inserted
// in batches) rather than a workload's.
func IsLoad(result any) bool {
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
