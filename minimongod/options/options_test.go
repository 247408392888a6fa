package options

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

const gib = uint64(1) << 30

// writeConfig writes a config file into a temp dir and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mongod.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustParse parses args, failing the test on error.
func mustParse(t *testing.T, args ...string) *Options {
	t.Helper()
	o, err := Parse(args, 8*gib)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return o
}

func TestDefaults(t *testing.T) {
	o := mustParse(t)
	want := &Options{
		Port:              27017,
		BindIP:            []string{"127.0.0.1"},
		DBPath:            "/data/db",
		StorageEngine:     "wiredTiger",
		JournalCompressor: "snappy",
		BlockCompressor:   "snappy",
		PrefixCompression: true,
		SyncDelay:         60,
		MaxConns:          1000000, SlowMS: 100, SlowOpSampleRate: 1,
		Argv:   []string{},
		Parsed: bson.D{},
	}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestEachOption(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(*Options) bool
	}{
		{"port", []string{"--port", "9900"}, func(o *Options) bool { return o.Port == 9900 }},
		{"port=", []string{"--port=9901"}, func(o *Options) bool { return o.Port == 9901 }},
		{"port single dash", []string{"-port", "9902"}, func(o *Options) bool { return o.Port == 9902 }},
		{"port hex", []string{"--port=0x10"}, func(o *Options) bool { return o.Port == 16 }},
		{"port zero", []string{"--port=0"}, func(o *Options) bool { return o.Port == 0 }},
		{"bind_ip list", []string{"--bind_ip", "127.0.0.1, ::1,,10.0.0.1"}, func(o *Options) bool {
			return cmp.Equal(o.BindIP, []string{"127.0.0.1", "::1", "10.0.0.1"})
		}},
		{"bind_ip star", []string{"--bind_ip=*"}, func(o *Options) bool {
			return cmp.Equal(o.BindIP, []string{"0.0.0.0"})
		}},
		{"bind_ip_all ipv6", []string{"--bind_ip_all", "--ipv6"}, func(o *Options) bool {
			return o.IPv6 && cmp.Equal(o.BindIP, []string{"0.0.0.0", "::"})
		}},
		{"maxConns", []string{"--maxConns", "50"}, func(o *Options) bool { return o.MaxConns == 50 }},
		{"pprof", []string{"--pprof", "127.0.0.1:6060"}, func(o *Options) bool { return o.Pprof == "127.0.0.1:6060" }},
		{"pprof ipv6", []string{"--pprof=[::1]:0"}, func(o *Options) bool { return o.Pprof == "[::1]:0" }},
		{"bind_ip_all", []string{"--bind_ip_all"}, func(o *Options) bool {
			return o.BindIPAll && cmp.Equal(o.BindIP, []string{"0.0.0.0"})
		}},
		{"dbpath", []string{"--dbpath", "/d"}, func(o *Options) bool { return o.DBPath == "/d" }},
		{"dbpath=", []string{"--dbpath=/e"}, func(o *Options) bool { return o.DBPath == "/e" }},
		{"cache", []string{"--wiredTigerCacheSizeGB", "0.25"}, func(o *Options) bool { return o.CacheSizeGB == 0.25 }},
		{"cache=", []string{"--wiredTigerCacheSizeGB=1.5"}, func(o *Options) bool { return o.CacheSizeGB == 1.5 }},
		{"engine config", []string{"--wiredTigerEngineConfigString", "eviction_trigger=90"}, func(o *Options) bool {
			return o.EngineConfigString == "eviction_trigger=90"
		}},
		{"engine config with =", []string{"--wiredTigerEngineConfigString=a=b,c=d"}, func(o *Options) bool {
			return o.EngineConfigString == "a=b,c=d"
		}},
		{"collection config", []string{"--wiredTigerCollectionConfigString=leaf_page_max=64k"}, func(o *Options) bool {
			return o.CollectionConfigString == "leaf_page_max=64k"
		}},
		{"index config", []string{"--wiredTigerIndexConfigString", "leaf_page_max=8k"}, func(o *Options) bool {
			return o.IndexConfigString == "leaf_page_max=8k"
		}},
		{"journal compressor", []string{"--wiredTigerJournalCompressor", "zstd"}, func(o *Options) bool {
			return o.JournalCompressor == "zstd"
		}},
		{"journal compressor any case", []string{"--wiredTigerJournalCompressor=NONE"}, func(o *Options) bool {
			return o.JournalCompressor == "NONE"
		}},
		{"block compressor", []string{"--wiredTigerCollectionBlockCompressor=zlib"}, func(o *Options) bool {
			return o.BlockCompressor == "zlib"
		}},
		{"prefix compression", []string{"--wiredTigerIndexPrefixCompression", "false"}, func(o *Options) bool {
			return !o.PrefixCompression
		}},
		{"syncdelay", []string{"--syncdelay", "0"}, func(o *Options) bool { return o.SyncDelay == 0 }},
		{"syncdelay=", []string{"--syncdelay=1.5"}, func(o *Options) bool { return o.SyncDelay == 1.5 }},
		{"setParameter order", []string{"--setParameter", "b=2", "--setParameter=a=1", "--setParameter", "c="},
			func(o *Options) bool {
				return cmp.Equal(o.SetParameters, []Param{{"b", "2"}, {"a", "1"}, {"c", ""}})
			}},
		{"setParameter value with =", []string{"--setParameter", "x=a=b"}, func(o *Options) bool {
			return cmp.Equal(o.SetParameters, []Param{{"x", "a=b"}})
		}},
		{"logpath", []string{"--logpath", "/l"}, func(o *Options) bool {
			return o.LogPath == "/l" && o.LogDestination == "file"
		}},
		{"logappend", []string{"--logappend"}, func(o *Options) bool { return o.LogAppend }},
		{"pidfilepath", []string{"--pidfilepath=/p"}, func(o *Options) bool { return o.PIDFilePath == "/p" }},
		{"quiet", []string{"--quiet"}, func(o *Options) bool { return o.Quiet }},
		{"-v", []string{"-v"}, func(o *Options) bool { return o.Verbosity == 1 }},
		{"-vvv", []string{"-vvv"}, func(o *Options) bool { return o.Verbosity == 3 }},
		{"--vv", []string{"--vv"}, func(o *Options) bool { return o.Verbosity == 2 }},
		{"-v vv", []string{"-v", "vv"}, func(o *Options) bool { return o.Verbosity == 3 }},
		{"--verbose", []string{"--verbose"}, func(o *Options) bool { return o.Verbosity == 1 }},
		{"--verbose=vvvv", []string{"--verbose=vvvv"}, func(o *Options) bool { return o.Verbosity == 4 }},
		{"--verbose vv", []string{"--verbose", "vv"}, func(o *Options) bool { return o.Verbosity == 2 }},
		{"max of -v forms", []string{"-vv", "--verbose=vvvv", "-vvv"}, func(o *Options) bool { return o.Verbosity == 4 }},
		{"journal", []string{"--journal"}, func(o *Options) bool { return !o.NoJournal }},
		{"nojournal", []string{"--nojournal"}, func(o *Options) bool { return o.NoJournal }},
		{"storageEngine", []string{"--storageEngine", "wiredTiger"}, func(o *Options) bool {
			return o.StorageEngine == "wiredTiger"
		}},
		{"help", []string{"--help"}, func(o *Options) bool { return o.Help }},
		{"-h", []string{"-h"}, func(o *Options) bool { return o.Help }},
		{"version", []string{"--version"}, func(o *Options) bool { return o.Version && !o.Help }},
		{"help beats version", []string{"--version", "--help"}, func(o *Options) bool { return o.Help }},
		{"help with unsupported", []string{"--help", "--fork"}, func(o *Options) bool { return o.Help }},
		{"argv kept", []string{"--port", "1"}, func(o *Options) bool {
			return cmp.Equal(o.Argv, []string{"--port", "1"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, tt.args...)
			if !tt.check(o) {
				t.Errorf("Parse(%q) = %+v", tt.args, o)
			}
		})
	}
}

// usageErr asserts err is a *UsageError and returns it.
func usageErr(t *testing.T, err error) *UsageError {
	t.Helper()
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not a *UsageError", err, err)
	}
	return ue
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args   []string
		reason string
	}{
		{[]string{"--foo"}, "Error parsing command line: unrecognised option '--foo'"},
		{[]string{"--foo=bar"}, "Error parsing command line: unrecognised option '--foo'"},
		{[]string{"-zap"}, "Error parsing command line: unrecognised option '-z'"},
		{[]string{"-foo"}, "Error reading config file: No such file or directory"}, // -f oo
		{[]string{"--dbpat", "/x"}, "Error parsing command line: unrecognised option '--dbpat'"},
		{[]string{"extra"}, "Error parsing command line: too many positional options have been specified on the command line"},
		{[]string{"--port"}, "Error parsing command line: the required argument for option '--port' is missing"},
		{[]string{"--port", "--dbpath", "/x"}, "Error parsing command line: the required argument for option '--port' is missing"},
		{[]string{"-f"}, "Error parsing command line: the required argument for option '-f' is missing"},
		{[]string{"--fork=true"}, "Error parsing command line: option '--fork' does not take any arguments"},
		{[]string{"--port", "1", "--port", "2"}, `Error parsing command line:  Multiple occurrences of option "--port"`},
		{[]string{"--port", "abc"}, `Error parsing option "port" as int: Did not consume whole string.`},
		{[]string{"--port="}, `Error parsing option "port" as int: No digits`},
		{[]string{"--port", "99999999999"}, `Error parsing option "port" as int: Overflow`},
		{[]string{"--port", "1.5"}, `Error parsing option "port" as int: Did not consume whole string.`},
		{[]string{"--syncdelay", "x"}, `Error parsing option "syncdelay" as double in: Did not consume any digits`},
		{[]string{"--syncdelay", "5s"}, `Error parsing option "syncdelay" as double in: Did not consume whole string.`},
		{[]string{"--syncdelay="}, `Error parsing option "syncdelay" as double in: Empty string`},
		{[]string{"--syncdelay", " 5"}, `Error parsing option "syncdelay" as double in: Leading whitespace`},
		{[]string{"--wiredTigerCacheSizeGB", "1e999"}, `Error parsing option "wiredTigerCacheSizeGB" as double in: Out of range`},
		{[]string{"--wiredTigerIndexPrefixCompression", "yes"},
			"Expected boolean but found string: yes for option: wiredTigerIndexPrefixCompression"},
		{[]string{"--setParameter", "novalue"}, `Illegal option assignment: "novalue"`},
		{[]string{"--setParameter", "a=1", "--setParameter", "a=2"},
			"Key Value Option: setParameter has a duplicate key from the same source: a"},
		{[]string{"-f", "/nonexistent/mongod.conf"}, "Error reading config file: No such file or directory"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := Parse(tt.args, 8*gib)
			ue := usageErr(t, err)
			want := &UsageError{
				Msg:      tt.reason + "\ntry 'mongod --help' for more information",
				Reason:   tt.reason,
				Stage:    StageParse,
				Exit:     2,
				Code:     2,
				CodeName: "BadValue",
			}
			if diff := cmp.Diff(want, ue); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInitErrors(t *testing.T) {
	tests := []struct {
		args   []string
		reason string
	}{
		{[]string{"--wiredTigerCacheSizeGB", "0.1"},
			"storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{[]string{"--wiredTigerCacheSizeGB", "10001"},
			"storage.wiredTiger.engineConfig.cacheSizeGB must be less than or equal to 10000"},
		{[]string{"--wiredTigerCacheSizeGB", "nan"},
			"storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{[]string{"--port", "65536"}, "net.port must be less than or equal to 65535"},
		{[]string{"--port", "-1"}, "net.port must be greater than or equal to 0"},
		{[]string{"--syncdelay", "-1"}, "storage.syncPeriodSecs must be greater than or equal to 0"},
		{[]string{"--syncdelay", "9000001"}, "storage.syncPeriodSecs must be less than or equal to 9e+06"},
		{[]string{"--wiredTigerJournalCompressor", "lz4"},
			"Compression option must be one of: 'none', 'snappy', 'zlib', or 'zstd'"},
		{[]string{"--wiredTigerCollectionBlockCompressor", "lz4"},
			"Compression option must be one of: 'none', 'snappy', 'zlib', or 'zstd'"},
		{[]string{"--bind_ip", "1.2.3.4", "--bind_ip_all"}, "net.bindIp is not allowed when net.bindIpAll is specified"},
		{[]string{"--journal", "--nojournal"}, "Can't specify both --journal and --nojournal options."},
		{[]string{"-vx"}, `The "verbose" option string cannot contain any characters other than "v"`},
		{[]string{"-v", "foo"}, `The "verbose" option string cannot contain any characters other than "v"`},
		{[]string{"--logpath="}, "logpath cannot be empty if supplied"},
		{[]string{"--pprof", "0.0.0.0:6060"}, `--pprof must be a loopback host:port (127.0.0.1:6060 or [::1]:6060), not "0.0.0.0:6060"`},
		{[]string{"--pprof", "localhost:6060"}, `--pprof must be a loopback host:port (127.0.0.1:6060 or [::1]:6060), not "localhost:6060"`},
		{[]string{"--pprof", "127.0.0.1"}, `--pprof must be a loopback host:port (127.0.0.1:6060 or [::1]:6060), not "127.0.0.1"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := Parse(tt.args, 8*gib)
			ue := usageErr(t, err)
			want := &UsageError{Msg: tt.reason, Reason: tt.reason, Stage: StageInit,
				Exit: 1, Code: 2, CodeName: "BadValue"}
			if diff := cmp.Diff(want, ue); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			wantAttr := bson.D{{Key: "code", Value: int32(2)}, {Key: "codeName", Value: "BadValue"},
				{Key: "errmsg", Value: tt.reason}}
			if diff := cmp.Diff(wantAttr, ue.LogAttr()); diff != "" {
				t.Errorf("LogAttr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnsupportedAndStartupErrors(t *testing.T) {
	tests := []struct {
		args     []string
		stage    Stage
		exit     int
		contains string
	}{
		{[]string{"--fork"}, StageUnsupported, 2, "minimongod does not fork"},
		{[]string{"--replSet", "rs0"}, StageUnsupported, 2, "does not support replication"},
		{[]string{"--storageEngine", "inMemory"}, StageStartup, 100,
			"Location18656: Cannot start server with an unknown storage engine: inMemory"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := Parse(tt.args, 8*gib)
			ue := usageErr(t, err)
			if ue.Stage != tt.stage || ue.ExitCode() != tt.exit || !strings.Contains(ue.Msg, tt.contains) {
				t.Errorf("got %+v, want stage %v exit %d containing %q", ue, tt.stage, tt.exit, tt.contains)
			}
		})
	}
}

func TestCheckDBPath(t *testing.T) {
	dir := t.TempDir()
	if err := (&Options{DBPath: dir}).CheckDBPath(); err != nil {
		t.Errorf("existing dir: %v", err)
	}
	missing := filepath.Join(dir, "nope")
	err := (&Options{DBPath: missing}).CheckDBPath()
	ue := usageErr(t, err)
	reason := "Data directory " + missing + " not found. Create the missing directory or specify " +
		"another path using (1) the --dbpath command line option, or (2) by adding the " +
		"'storage.dbPath' option in the configuration file."
	want := &UsageError{Msg: "NonExistentPath: " + reason, Reason: reason, Stage: StageStartup,
		Exit: 100, Code: 29, CodeName: "NonExistentPath"}
	if diff := cmp.Diff(want, ue); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if ue.LogAttr() != want.Msg {
		t.Errorf("LogAttr = %v", ue.LogAttr())
	}
}
