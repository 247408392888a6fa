package options

import (
	"strings"
	"testing"
)

func TestDefaultCacheSizeMB(t *testing.T) {
	tests := []struct {
		ram  uint64
		want int64
	}{
		{0, 256},
		{512 << 20, 256},
		{1 * gib, 256},
		{1536 << 20, 256},
		{2 * gib, 512},
		{4 * gib, 1536},
		{8 * gib, 3584},
		{16 * gib, 7680},
		{24 * gib, 11776},
		{64 * gib, 32256},
		{3*gib + 1, 1024},      // sub-MiB remainder is dropped
		{2*gib + 3<<20, 513},   // (2051 - 1024) * 0.5 = 513.5, truncated
		{100000000 * gib, 1e7}, // capped at kMaxSizeCacheMB
	}
	for _, tt := range tests {
		if got := DefaultCacheSizeMB(tt.ram); got != tt.want {
			t.Errorf("DefaultCacheSizeMB(%d) = %d, want %d", tt.ram, got, tt.want)
		}
	}
}

func TestCacheSizeMB(t *testing.T) {
	tests := []struct {
		gb   float64
		ram  uint64
		want int64
	}{
		{0, 24 * gib, 11776},
		{0.25, 24 * gib, 256},
		{1, 1 * gib, 1024},
		{1.5, 0, 1536},
		{0.3, 0, 307}, // 307.2 truncated
		{10000, 0, 10240000 - 240000},
	}
	for _, tt := range tests {
		o := &Options{CacheSizeGB: tt.gb}
		if got := o.CacheSizeMB(tt.ram); got != tt.want {
			t.Errorf("CacheSizeMB(gb=%v, ram=%d) = %d, want %d", tt.gb, tt.ram, got, tt.want)
		}
	}
}

func TestWiredTigerOpenConfig(t *testing.T) {
	tests := []struct {
		name string
		args []string
		ext  string
		want string
	}{
		{"defaults", nil, "",
			"create,cache_size=11776M,cache_overflow=(file_max=0M),session_max=33000," +
				"eviction=(threads_min=4,threads_max=4),config_base=false,statistics=(fast)," +
				"log=(enabled=true,archive=true,path=journal,compressor=snappy)," +
				"file_manager=(close_idle_time=100000,close_scan_interval=10,close_handle_minimum=250)," +
				"statistics_log=(wait=0),verbose=[recovery_progress,checkpoint_progress],"},
		{"all pieces", []string{"--wiredTigerCacheSizeGB", "0.25", "--wiredTigerJournalCompressor", "zstd",
			"--wiredTigerEngineConfigString", "eviction_trigger=90"}, "/lib/snappy.so",
			"create,cache_size=256M,cache_overflow=(file_max=0M),session_max=33000," +
				"eviction=(threads_min=4,threads_max=4),config_base=false,statistics=(fast)," +
				"log=(enabled=true,archive=true,path=journal,compressor=zstd)," +
				"file_manager=(close_idle_time=100000,close_scan_interval=10,close_handle_minimum=250)," +
				"statistics_log=(wait=0),verbose=[recovery_progress,checkpoint_progress]," +
				"extensions=[/lib/snappy.so],eviction_trigger=90"},
		{"nojournal", []string{"--nojournal", "--wiredTigerCacheSizeGB=1"}, "",
			"create,cache_size=1024M,cache_overflow=(file_max=0M),session_max=33000," +
				"eviction=(threads_min=4,threads_max=4),config_base=false,statistics=(fast)," +
				"log=(enabled=true,archive=true,path=journal,compressor=snappy)," +
				"file_manager=(close_idle_time=100000,close_scan_interval=10,close_handle_minimum=250)," +
				"statistics_log=(wait=0),verbose=[recovery_progress,checkpoint_progress]," +
				",log=(enabled=false),"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.args...)
			if got := o.WiredTigerOpenConfig(24*gib, tt.ext); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestOpenConfigQuarterGB(t *testing.T) {
	o := mustParse(t, "--wiredTigerCacheSizeGB", "0.25")
	if got := o.WiredTigerOpenConfig(64*gib, ""); !strings.Contains(got, "cache_size=256M") {
		t.Errorf("open config %q lacks cache_size=256M", got)
	}
}

func TestCollectionAndIndexConfig(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		coll, idx string
	}{
		{"defaults", nil,
			"type=file,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on,block_compressor=snappy,,",
			"type=file,internal_page_max=16k,leaf_page_max=16k,checksum=on,prefix_compression=true,block_compressor=,,,"},
		{"custom", []string{"--wiredTigerCollectionBlockCompressor", "zlib",
			"--wiredTigerCollectionConfigString", "leaf_page_max=64k",
			"--wiredTigerIndexConfigString", "leaf_page_max=8k",
			"--wiredTigerIndexPrefixCompression", "false"},
			"type=file,memory_page_max=10m,split_pct=90,leaf_value_max=64MB,checksum=on,block_compressor=zlib,leaf_page_max=64k,",
			"type=file,internal_page_max=16k,leaf_page_max=16k,checksum=on,block_compressor=,leaf_page_max=8k,,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.args...)
			if got := o.CollectionConfig(); got != tt.coll {
				t.Errorf("CollectionConfig\n got %s\nwant %s", got, tt.coll)
			}
			if got := o.IndexConfig(); got != tt.idx {
				t.Errorf("IndexConfig\n got %s\nwant %s", got, tt.idx)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	u := Usage()
	for i := range specs {
		s := &specs[i]
		if s.cli == "" || s.hidden {
			continue
		}
		if !strings.Contains(u, "--"+s.cli) {
			t.Errorf("Usage lacks --%s", s.cli)
		}
	}
	for _, want := range []string{
		"General options:\n",
		"  -h [ --help ]                         Show this usage information\n",
		"  --port arg                            Specify port number - 27017 by default\n",
		"  -f [ --config ] arg                   Configuration file specifying additional\n" +
			"                                        options\n",
		"  --syncdelay arg (=60)                 Seconds between disk syncs (0=never, but\n",
		"  --wiredTigerJournalCompressor arg (=snappy)\n" +
			"                                        Use a compressor for log records\n",
		"  -v [ --verbose ] [=arg(=v)]",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage lacks %q; got:\n%s", want, u)
		}
	}
	for _, line := range strings.Split(u, "\n") {
		if len(line) > usageWidth {
			t.Errorf("line longer than %d: %q", usageWidth, line)
		}
	}
}

func TestNumberParsers(t *testing.T) {
	ints := []struct {
		in     string
		want   int32
		reason string
	}{
		{"27017", 27017, ""}, {"+5", 5, ""}, {"-7", -7, ""}, {"010", 8, ""}, {"0x1F", 31, ""},
		{"2147483647", 2147483647, ""}, {"-2147483648", -2147483648, ""},
		{"2147483648", 0, reasonOverflow}, {"", 0, reasonNoDigits}, {"-", 0, reasonNoDigits},
		{"12a", 0, reasonTrailing}, {" 1", 0, reasonTrailing}, {"09", 0, reasonTrailing},
	}
	for _, tt := range ints {
		got, reason := parseInt32(tt.in)
		if got != tt.want || reason != tt.reason {
			t.Errorf("parseInt32(%q) = %d, %q; want %d, %q", tt.in, got, reason, tt.want, tt.reason)
		}
	}
	doubles := []struct {
		in     string
		want   float64
		reason string
	}{
		{"60", 60, ""}, {"0.25", 0.25, ""}, {"1e3", 1000, ""}, {"0x10", 16, ""}, {"-1.5", -1.5, ""},
		{"", 0, reasonEmpty}, {" 1", 0, reasonLeadingSpace}, {"abc", 0, reasonNoDigitsFound},
		{"1.5x", 0, reasonTrailing}, {"1_000", 0, reasonTrailing}, {"1e400", 0, reasonOutOfRange},
	}
	for _, tt := range doubles {
		got, reason := parseDouble(tt.in)
		if got != tt.want || reason != tt.reason {
			t.Errorf("parseDouble(%q) = %v, %q; want %v, %q", tt.in, got, reason, tt.want, tt.reason)
		}
	}
}
