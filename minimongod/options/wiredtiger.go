package options

import (
	"math"
	"strconv"
	"strings"
)

// maxCacheSizeMB is WiredTigerUtil::getCacheSizeMB's kMaxSizeCacheMB.
const maxCacheSizeMB = 10 * 1000 * 1000

// DefaultCacheSizeMB is mongod's default WiredTiger cache size for a
// machine with totalRAMBytes of memory: max((memMB - 1024) * 0.5, 256),
// truncated, where memMB is ProcessInfo::getMemSizeMB (bytes / 1 MiB,
// integer division) — WiredTigerUtil::getCacheSizeMB(0).
func DefaultCacheSizeMB(totalRAMBytes uint64) int64 {
	memMB := float64(totalRAMBytes / (1024 * 1024))
	return capCacheMB(math.Max((memMB-1024)*0.5, 256.0))
}

// capCacheMB clamps to kMaxSizeCacheMB and truncates like static_cast<size_t>.
func capCacheMB(mb float64) int64 {
	if mb > maxCacheSizeMB {
		mb = maxCacheSizeMB
	}
	return int64(mb)
}

// CacheSizeMB is the cache size mongod uses: cacheSizeGB * 1024 truncated
// when given, else DefaultCacheSizeMB(totalRAMBytes).
func (o *Options) CacheSizeMB(totalRAMBytes uint64) int64 {
	if o.CacheSizeGB == 0 {
		return DefaultCacheSizeMB(totalRAMBytes)
	}
	return capCacheMB(1024 * o.CacheSizeGB)
}

// Pieces of mongod 4.2's wiredtiger_open configuration
// (WiredTigerKVEngine::WiredTigerKVEngine) with the 4.2 defaults of the
// server parameters it interpolates: wiredTigerMaxCacheOverflowSizeGB 0,
// wiredTigerFileHandleCloseIdleTime 100000, ...CloseScanInterval 10,
// ...CloseMinimum 250, statisticsLogDelaySecs 0.
const (
	wtOpenPrefix = "create,"
	wtOpenMiddle = "cache_overflow=(file_max=0M)," +
		"session_max=33000," +
		"eviction=(threads_min=4,threads_max=4)," +
		"config_base=false," +
		"statistics=(fast),"
	wtOpenTail = "file_manager=(close_idle_time=100000,close_scan_interval=10,close_handle_minimum=250)," +
		"statistics_log=(wait=0)," +
		"verbose=[recovery_progress,checkpoint_progress],"
)

// WiredTigerOpenConfig builds the wiredtiger_open configuration string as
// mongod 4.2 does: fixed settings, the cache size, the journal (log)
// settings with the journal compressor, the extensions (when
// extensionsPath is not empty, e.g. the snappy compressor's .so), then the
// user's --wiredTigerEngineConfigString so it overrides, and finally
// ",log=(enabled=false)," when the journal is off.
func (o *Options) WiredTigerOpenConfig(totalRAMBytes uint64, extensionsPath string) string {
	var b strings.Builder
	b.WriteString(wtOpenPrefix)
	b.WriteString("cache_size=" + strconv.FormatInt(o.CacheSizeMB(totalRAMBytes), 10) + "M,")
	b.WriteString(wtOpenMiddle)
	b.WriteString("log=(enabled=true,archive=true,path=journal,compressor=" + o.journalCompressor() + "),")
	b.WriteString(wtOpenTail)
	if extensionsPath != "" {
		b.WriteString("extensions=[" + extensionsPath + "],")
	}
	b.WriteString(o.EngineConfigString)
	if o.NoJournal {
		b.WriteString(",log=(enabled=false),")
	}
	return b.String()
}

// journalCompressor returns the journal compressor, defaulting to snappy
// for an Options not built by Parse.
func (o *Options) journalCompressor() string {
	if o.JournalCompressor == "" {
		return DefaultCompressor
	}
	return o.JournalCompressor
}

// CollectionConfig is the start of a collection table's create string, as
// WiredTigerRecordStore::generateCreateString builds it in 4.2; the caller
// appends key_format, value_format, app_metadata and log settings.
func (o *Options) CollectionConfig() string {
	compressor := o.BlockCompressor
	if compressor == "" {
		compressor = DefaultCompressor
	}
	return "type=file,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on," +
		"block_compressor=" + compressor + "," +
		o.CollectionConfigString + ","
}

// IndexConfig is the start of an index table's create string, as
// WiredTigerIndex::generateCreateString builds it in 4.2: the index block
// compressor is empty (none), then --wiredTigerIndexConfigString and the
// (empty) per-collection index config; the caller appends key_format,
// value_format, app_metadata and log settings.
func (o *Options) IndexConfig() string {
	var b strings.Builder
	b.WriteString("type=file,internal_page_max=16k,leaf_page_max=16k,checksum=on,")
	if o.PrefixCompression {
		b.WriteString("prefix_compression=true,")
	}
	b.WriteString("block_compressor=,")
	b.WriteString(o.IndexConfigString + ",")
	b.WriteString(",")
	return b.String()
}
