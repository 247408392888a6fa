package options

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
)

const fullConfig = `
net:
  port: 9900
  bindIp: 127.0.0.1,10.1.1.1
storage:
  dbPath: /d
  syncPeriodSecs: 30
  journal:
    enabled: true
  wiredTiger:
    engineConfig:
      cacheSizeGB: 0.25
      configString: "eviction_trigger=95"
      journalCompressor: zlib
    collectionConfig:
      blockCompressor: zstd
    indexConfig:
      prefixCompression: false
setParameter:
  zeta: "1"
  alpha: two
systemLog:
  destination: file
  path: /l
  logAppend: true
processManagement:
  pidFilePath: /p
  fork: false
`

func TestConfigFile(t *testing.T) {
	path := writeConfig(t, fullConfig)
	o := mustParse(t, "-f", path)
	want := &Options{
		Port:               9900,
		BindIP:             []string{"127.0.0.1", "10.1.1.1"},
		DBPath:             "/d",
		StorageEngine:      "wiredTiger",
		CacheSizeGB:        0.25,
		EngineConfigString: "eviction_trigger=95",
		JournalCompressor:  "zlib",
		BlockCompressor:    "zstd",
		PrefixCompression:  false,
		SyncDelay:          30,
		MaxConns:           1000000, SlowMS: 100, SlowOpSampleRate: 1,
		SetParameters:  []Param{{"zeta", "1"}, {"alpha", "two"}},
		LogPath:        "/l",
		LogDestination: "file",
		LogAppend:      true,
		PIDFilePath:    "/p",
		ConfigFile:     path,
		Argv:           []string{"-f", path},
	}
	o.Parsed = nil
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParsedShape(t *testing.T) {
	path := writeConfig(t, fullConfig)
	o := mustParse(t, "--config", path, "--port", "9901", "--setParameter", "alpha=cli", "-vv")
	want := bson.D{
		{Key: "config", Value: path},
		{Key: "net", Value: bson.D{
			{Key: "bindIp", Value: "127.0.0.1,10.1.1.1"},
			{Key: "port", Value: int32(9901)},
		}},
		{Key: "processManagement", Value: bson.D{
			{Key: "fork", Value: false},
			{Key: "pidFilePath", Value: "/p"},
		}},
		{Key: "setParameter", Value: bson.D{
			{Key: "alpha", Value: "cli"},
			{Key: "zeta", Value: "1"},
		}},
		{Key: "storage", Value: bson.D{
			{Key: "dbPath", Value: "/d"},
			{Key: "journal", Value: bson.D{{Key: "enabled", Value: true}}},
			{Key: "syncPeriodSecs", Value: 30.0},
			{Key: "wiredTiger", Value: bson.D{
				{Key: "collectionConfig", Value: bson.D{{Key: "blockCompressor", Value: "zstd"}}},
				{Key: "engineConfig", Value: bson.D{
					{Key: "cacheSizeGB", Value: 0.25},
					{Key: "configString", Value: "eviction_trigger=95"},
					{Key: "journalCompressor", Value: "zlib"},
				}},
				{Key: "indexConfig", Value: bson.D{{Key: "prefixCompression", Value: false}}},
			}},
		}},
		{Key: "systemLog", Value: bson.D{
			{Key: "destination", Value: "file"},
			{Key: "logAppend", Value: true},
			{Key: "path", Value: "/l"},
			{Key: "verbosity", Value: int32(2)},
		}},
	}
	if diff := cmp.Diff(want, o.Parsed); diff != "" {
		t.Errorf("Parsed (-want +got):\n%s", diff)
	}
}

func TestParsedCommandLineOnly(t *testing.T) {
	o := mustParse(t, "--port", "9900", "--dbpath", "/d", "--wiredTigerCacheSizeGB", "0.25",
		"--wiredTigerEngineConfigString", "x=1", "--logpath", "/l", "--pidfilepath", "/p",
		"--setParameter", "name=value", "--bind_ip", "127.0.0.1", "--syncdelay", "60", "--quiet")
	want := bson.D{
		{Key: "net", Value: bson.D{{Key: "bindIp", Value: "127.0.0.1"}, {Key: "port", Value: int32(9900)}}},
		{Key: "processManagement", Value: bson.D{{Key: "pidFilePath", Value: "/p"}}},
		{Key: "setParameter", Value: bson.D{{Key: "name", Value: "value"}}},
		{Key: "storage", Value: bson.D{
			{Key: "dbPath", Value: "/d"},
			{Key: "syncPeriodSecs", Value: 60.0},
			{Key: "wiredTiger", Value: bson.D{{Key: "engineConfig", Value: bson.D{
				{Key: "cacheSizeGB", Value: 0.25},
				{Key: "configString", Value: "x=1"},
			}}}},
		}},
		{Key: "systemLog", Value: bson.D{
			{Key: "destination", Value: "file"},
			{Key: "path", Value: "/l"},
			{Key: "quiet", Value: true},
		}},
	}
	if diff := cmp.Diff(want, o.Parsed); diff != "" {
		t.Errorf("Parsed (-want +got):\n%s", diff)
	}
}

func TestCommandLineOverridesFile(t *testing.T) {
	path := writeConfig(t, fullConfig)
	o := mustParse(t, "-f", path, "--port=1234", "--dbpath", "/cli", "--wiredTigerCacheSizeGB", "2",
		"--setParameter", "alpha=cli", "--setParameter", "beta=new", "--bind_ip", "0.0.0.0")
	if o.Port != 1234 || o.DBPath != "/cli" || o.CacheSizeGB != 2 ||
		!cmp.Equal(o.BindIP, []string{"0.0.0.0"}) {
		t.Errorf("override failed: %+v", o)
	}
	wantParams := []Param{{"zeta", "1"}, {"alpha", "cli"}, {"beta", "new"}}
	if diff := cmp.Diff(wantParams, o.SetParameters); diff != "" {
		t.Errorf("setParameter (-want +got):\n%s", diff)
	}
	if o.SyncDelay != 30 || o.JournalCompressor != "zlib" {
		t.Errorf("file values lost: %+v", o)
	}
}

func TestConfigFileForms(t *testing.T) {
	tests := []struct {
		name, text string
		check      func(*Options) bool
	}{
		{"empty", "", func(o *Options) bool { return o.Port == 27017 }},
		{"comment only", "# nothing\n", func(o *Options) bool { return o.Port == 27017 }},
		{"quoted number", "net:\n  port: \"9900\"\n", func(o *Options) bool { return o.Port == 9900 }},
		{"value key", "net:\n  port:\n    value: 9902\n", func(o *Options) bool { return o.Port == 9902 }},
		{"journal off", "storage:\n  journal:\n    enabled: false\n", func(o *Options) bool { return o.NoJournal }},
		{"bindIpAll", "net:\n  bindIpAll: true\n", func(o *Options) bool { return o.BindIPAll }},
		{"verbosity", "systemLog:\n  verbosity: 2\n", func(o *Options) bool { return o.Verbosity == 2 }},
		{"ini", "port = 9903\ndbpath=/ini\nlogappend=true\n# c\nsetParameter=a=b\n", func(o *Options) bool {
			return o.Port == 9903 && o.DBPath == "/ini" && o.LogAppend &&
				cmp.Equal(o.SetParameters, []Param{{"a", "b"}})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := mustParse(t, "-f", writeConfig(t, tt.text))
			if !tt.check(o) {
				t.Errorf("got %+v", o)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name, text string
		stage      Stage
		reason     string
	}{
		{"unknown key", "net:\n  foo: 1\n", StageParse, "Unrecognized option: net.foo"},
		{"unknown section", "bogus: 1\n", StageParse, "Unrecognized option: bogus"},
		{"config in file", "config: /x\n", StageParse, "Unrecognized option: config"},
		{"bad int", "net:\n  port: abc\n", StageParse,
			`Error parsing option "net.port" as int: Did not consume whole string.`},
		{"bad double", "storage:\n  syncPeriodSecs: soon\n", StageParse,
			`Error parsing option "storage.syncPeriodSecs" as double in: Did not consume any digits`},
		{"bad switch", "systemLog:\n  logAppend: yes\n", StageParse,
			"Expected boolean switch but found string: yes for option: systemLog.logAppend"},
		{"bad bool", "storage:\n  wiredTiger:\n    indexConfig:\n      prefixCompression: 1\n", StageParse,
			"Expected boolean but found string: 1 for option: storage.wiredTiger.indexConfig.prefixCompression"},
		{"setParameter not map", "setParameter: x\n", StageParse,
			"Option: setParameter is of type StringMap, but value in YAML config is not a map type"},
		{"setParameter nested", "setParameter:\n  a:\n    b: c\n", StageParse,
			"Option: setParameter has a map with non scalar values, which is not allowed"},
		{"top level list", "- a\n- b\n", StageParse, "No map found at top level of YAML config"},
		{"ini unknown", "bogus = 1\n", StageParse, "Error parsing INI config file: unrecognised option 'bogus'"},
		{"cache range", "storage:\n  wiredTiger:\n    engineConfig:\n      cacheSizeGB: 0.2\n", StageInit,
			"storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{"path without destination", "systemLog:\n  path: /l\n", StageInit,
			"Can only use systemLog.path if systemLog.destination is to a file"},
		{"file without path", "systemLog:\n  destination: file\n", StageInit,
			"systemLog.path is required if systemLog.destination is to a file"},
		{"bad destination", "systemLog:\n  destination: tape\n", StageInit,
			"Bad value for systemLog.destination: tape. Supported targets are: (syslog|file)"},
		{"journal in file, nojournal flag", "storage:\n  journal:\n    enabled: true\n", StageInit,
			"Can't specify both --journal and --nojournal options."},
		{"fork", "processManagement:\n  fork: true\n", StageUnsupported,
			"minimongod does not fork: --fork (processManagement.fork) is not supported; " +
				"run minimongod in the foreground or under a service manager"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-f", writeConfig(t, tt.text)}
			if strings.Contains(tt.name, "nojournal") {
				args = append(args, "--nojournal")
			}
			_, err := Parse(args, 8*gib)
			ue := usageErr(t, err)
			if ue.Stage != tt.stage || ue.Reason != tt.reason {
				t.Errorf("got stage %v reason %q, want %v %q", ue.Stage, ue.Reason, tt.stage, tt.reason)
			}
			if tt.stage == StageParse && !strings.HasSuffix(ue.Msg, "\n"+tryHelp) {
				t.Errorf("Msg %q lacks the try line", ue.Msg)
			}
		})
	}
}

func TestYAMLSyntaxError(t *testing.T) {
	_, err := Parse([]string{"-f", writeConfig(t, "net:\n  port: [1\n")}, 8*gib)
	ue := usageErr(t, err)
	if ue.Stage != StageParse || !strings.HasPrefix(ue.Reason, "Error parsing YAML config file: ") {
		t.Errorf("got %+v", ue)
	}
}

func TestParsedCanonicalization(t *testing.T) {
	tests := []struct {
		args []string
		want bson.D
	}{
		{[]string{"--nojournal"}, bson.D{{Key: "storage", Value: bson.D{
			{Key: "journal", Value: bson.D{{Key: "enabled", Value: false}}}}}}},
		{[]string{"--journal"}, bson.D{{Key: "storage", Value: bson.D{
			{Key: "journal", Value: bson.D{{Key: "enabled", Value: true}}}}}}},
		{[]string{"-vvv", "--logappend"}, bson.D{{Key: "systemLog", Value: bson.D{
			{Key: "logAppend", Value: true}, {Key: "verbosity", Value: int32(3)}}}}},
		{[]string{"--bind_ip_all", "--storageEngine=wiredTiger"}, bson.D{
			{Key: "net", Value: bson.D{{Key: "bindIpAll", Value: true}}},
			{Key: "storage", Value: bson.D{{Key: "engine", Value: "wiredTiger"}}}}},
		{[]string{"--wiredTigerIndexPrefixCompression=false", "--wiredTigerCollectionBlockCompressor=none"},
			bson.D{{Key: "storage", Value: bson.D{{Key: "wiredTiger", Value: bson.D{
				{Key: "collectionConfig", Value: bson.D{{Key: "blockCompressor", Value: "none"}}},
				{Key: "indexConfig", Value: bson.D{{Key: "prefixCompression", Value: false}}}}}}}}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o := mustParse(t, tt.args...)
			if diff := cmp.Diff(tt.want, o.Parsed); diff != "" {
				t.Errorf("Parsed (-want +got):\n%s", diff)
			}
		})
	}
}
