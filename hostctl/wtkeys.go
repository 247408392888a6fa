package hostctl

import "slices"

// The WiredTiger keys a playbook may not set, decided key by key from
// WiredTiger 3.2.1's documented configuration (wiredtiger.h: the
// configuration of wiredtiger_open, WT_CONNECTION::reconfigure and
// WT_SESSION::create, which mongod passes engineConfig,
// wiredTigerEngineRuntimeConfig and the collection and index strings to)
// and the keys later WiredTiger releases that mongod ships with added.
// A key is refused when any part of its path is refused: log.path,
// log=(path=), statistics_log=(path=) and "path" anywhere else alike.

// wtRefusal is why a key is refused and what to do instead.
type wtRefusal struct {
	why string
	// allow are the values that are fine (as written); other values, and
	// the key without a value, are refused.
	allow []string
	// do is what to do instead; empty means leave the key out.
	do string
}

func (r wtRefusal) allows(v wtItem) bool {
	return (v.kind == wtID || v.kind == wtString) && slices.Contains(r.allow, v.text)
}

func (r wtRefusal) instead() string {
	if r.do != "" {
		return r.do
	}
	return "leave it out: WiredTiger keeps its files in the dbpath"
}

// wtRefused are the refused key names (lower case), with the reason.
var wtRefused = map[string]wtRefusal{
	"path":       {why: "it names a directory for WiredTiger's files (log.path: the journal, statistics_log.path: statistics, operation_tracking.path: tracking files; later releases' live_restore.path: a database to copy in)"},
	"extensions": {why: "it loads shared libraries into the server process (dlopen), whose code runs with the server's rights"},
	"source":     {why: "it names the data source a table, column group or index is stored in, such as file:NAME, a file anywhere"},
	"type": {why: `a data source type other than file or lsm is an extension's, and a "file:..." type names a file anywhere`,
		allow: []string{"file", "lsm", "dram", "DRAM"}, do: "use type=file or type=lsm (or type=dram for a block or chunk cache)"},
	"huffman_key":   {why: "its utf8<file> and utf16<file> values read a symbol frequency file", allow: []string{"none", "english"}, do: "use none or english"},
	"huffman_value": {why: "its utf8<file> and utf16<file> values read a symbol frequency file", allow: []string{"none", "english"}, do: "use none or english"},
	"encryption":    {why: "an encryptor comes from an extension library, and its keyid and secretkey name keys kept outside the dbpath (a key file or key server)"},
	"merge_custom":  {why: "it makes LSM merges write to a data source named by a prefix, such as file:DIR, files anywhere"},
	"use_environment": {why: "it lets WIREDTIGER_HOME and WIREDTIGER_CONFIG in the server's environment choose its home directory and configuration",
		do: "leave it out: the dbpath is the home directory"},
	"use_environment_priv": {why: "it lets WIREDTIGER_HOME and WIREDTIGER_CONFIG in the server's environment choose its home directory and configuration, even as root",
		do: "leave it out: the dbpath is the home directory"},
	"tiered_storage": {why: "it moves data to an object store (a bucket, on another host or in a directory) through a storage source extension"},
	"bucket":         {why: "it names tiered storage's object store"},
	"bucket_prefix":  {why: "it names a place in tiered storage's object store"},
	"auth_token":     {why: "it is a credential for tiered storage's object store"},
	"storage_path":   {why: "chunk_cache.storage_path names a cache file outside the dbpath"},
	"nvram_path":     {why: "block_cache.nvram_path names a device or file for the block cache"},
	"import":         {why: "it imports a table from files that are not part of the database (import.metadata_file names one)"},
	"live_restore":   {why: "it copies a database in from another directory"},
	"disaggregated":  {why: "it keeps pages in a page service outside the server"},
}

// wtAllowed are WiredTiger 3.2.1's documented keys that are fine, with
// the reason. wtd does not refuse a key it does not know (WiredTiger
// itself refuses unknown keys); the table records the decision for each
// documented key, and a test holds it to wiredtiger.h.
var wtAllowed = map[string]string{
	// wiredtiger_open and WT_CONNECTION::reconfigure.
	"async":                             "asynchronous operations: threads and queue sizes",
	"async.enabled":                     "a switch",
	"async.ops_max":                     "a count",
	"async.threads":                     "a thread count",
	"buffer_alignment":                  "an I/O buffer alignment",
	"builtin_extension_config":          "settings for the extensions built into WiredTiger (compressors), read with this check",
	"cache_cursors":                     "a switch",
	"cache_max_wait_ms":                 "a time",
	"cache_overflow":                    "the cache overflow table's bound (a file in the dbpath)",
	"cache_overflow.file_max":           "a size",
	"cache_overhead":                    "a percentage",
	"cache_size":                        "a size",
	"checkpoint":                        "checkpoint intervals",
	"checkpoint.log_size":               "a size",
	"checkpoint.wait":                   "a time",
	"checkpoint_sync":                   "whether checkpoints flush files in the dbpath",
	"compatibility":                     "a release version",
	"compatibility.release":             "a version",
	"compatibility.require_max":         "a version",
	"compatibility.require_min":         "a version",
	"config_base":                       "whether WiredTiger reads or writes WiredTiger.basecfg in the dbpath",
	"create":                            "create the database in the dbpath",
	"debug_mode":                        "debugging switches",
	"debug_mode.checkpoint_retention":   "a count",
	"debug_mode.eviction":               "a switch",
	"debug_mode.rollback_error":         "a count",
	"debug_mode.table_logging":          "a switch",
	"direct_io":                         "O_DIRECT for the dbpath's files",
	"error_prefix":                      "a message prefix",
	"eviction":                          "eviction threads",
	"eviction.threads_max":              "a thread count",
	"eviction.threads_min":              "a thread count",
	"eviction_checkpoint_target":        "a percentage or size",
	"eviction_dirty_target":             "a percentage or size",
	"eviction_dirty_trigger":            "a percentage or size",
	"eviction_target":                   "a percentage or size",
	"eviction_trigger":                  "a percentage or size",
	"exclusive":                         "fail if the database exists",
	"file_extend":                       "how the dbpath's files grow",
	"file_manager":                      "when idle file handles close",
	"file_manager.close_handle_minimum": "a count",
	"file_manager.close_idle_time":      "a time",
	"file_manager.close_scan_interval":  "a time",
	"in_memory":                         "keep data in memory only",
	"io_capacity":                       "an I/O rate",
	"io_capacity.total":                 "a rate",
	"log":                               "the journal's settings (its path is refused)",
	"log.archive":                       "a switch",
	"log.compressor":                    "a compressor's name (built in, or from an extension, which is refused)",
	"log.enabled":                       "a switch",
	"log.file_max":                      "a size",
	"log.os_cache_dirty_pct":            "a percentage",
	"log.prealloc":                      "a switch",
	"log.recover":                       "error or on",
	"log.zero_fill":                     "a switch",
	"lsm_manager":                       "LSM merge threads",
	"lsm_manager.merge":                 "a switch",
	"lsm_manager.worker_thread_max":     "a thread count",
	"mmap":                              "memory-map the dbpath's files",
	"multiprocess":                      "not supported by WiredTiger; names nothing",
	"operation_tracking":                "operation tracking (files in the dbpath; its path is refused)",
	"operation_tracking.enabled":        "a switch",
	"readonly":                          "open the dbpath read-only",
	"salvage":                           "salvage the dbpath's files",
	"session_max":                       "a count",
	"shared_cache":                      "a cache shared by connections in the same process",
	"shared_cache.chunk":                "a size",
	"shared_cache.name":                 "a name within the process",
	"shared_cache.quota":                "a size",
	"shared_cache.reserve":              "a size",
	"shared_cache.size":                 "a size",
	"statistics":                        "which statistics to keep",
	"statistics_log":                    "statistics files (in the dbpath; their path is refused)",
	"statistics_log.json":               "a switch",
	"statistics_log.on_close":           "a switch",
	"statistics_log.sources":            "URIs matched against the tables already open; nothing is opened",
	"statistics_log.timestamp":          "a time format",
	"statistics_log.wait":               "a time",
	"transaction_sync":                  "how commits sync the journal",
	"transaction_sync.enabled":          "a switch",
	"transaction_sync.method":           "dsync, fsync or none",
	"verbose":                           "message categories (to the server's log)",
	"write_through":                     "FILE_FLAG_WRITE_THROUGH on Windows",
	// WT_SESSION::create (the collection and index strings).
	"access_pattern_hint":         "an access pattern",
	"allocation_size":             "a size",
	"app_metadata":                "text stored with the table",
	"block_allocation":            "first or best",
	"block_compressor":            "a compressor's name (built in, or from an extension, which is refused)",
	"cache_resident":              "a switch",
	"checksum":                    "on, off or uncompressed",
	"colgroups":                   "column group names",
	"collator":                    "a collator's name (from an extension, which is refused)",
	"columns":                     "column names",
	"dictionary":                  "a count",
	"extractor":                   "an extractor's name (from an extension, which is refused)",
	"format":                      "btree",
	"ignore_in_memory_cache_size": "a switch",
	"immutable":                   "a switch",
	"internal_key_max":            "a size",
	"internal_key_truncate":       "a switch",
	"internal_page_max":           "a size",
	"key_format":                  "a format",
	"leaf_key_max":                "a size",
	"leaf_page_max":               "a size",
	"leaf_value_max":              "a size",
	"lsm":                         "LSM tree settings (files in the dbpath)",
	"lsm.auto_throttle":           "a switch",
	"lsm.bloom":                   "a switch",
	"lsm.bloom_bit_count":         "a count",
	"lsm.bloom_config":            "a WT_SESSION::create string for bloom filters, read with this check",
	"lsm.bloom_hash_count":        "a count",
	"lsm.bloom_oldest":            "a switch",
	"lsm.chunk_count_limit":       "a count",
	"lsm.chunk_max":               "a size",
	"lsm.chunk_size":              "a size",
	"lsm.merge_max":               "a count",
	"lsm.merge_min":               "a count",
	"memory_page_image_max":       "a size",
	"memory_page_max":             "a size",
	"os_cache_dirty_max":          "a size",
	"os_cache_max":                "a size",
	"prefix_compression":          "a switch",
	"prefix_compression_min":      "a size",
	"split_pct":                   "a percentage",
	"value_format":                "a format",
}
