// Package options parses minimongod's command line and YAML config file
// the way mongod 4.4 does: the same option names, defaults, ranges,
// precedence (command line over config file) and error texts. It also
// derives the WiredTiger configuration strings mongod builds from them.
package options

import (
	"net"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Defaults of mongod 4.4.
const (
	DefaultPort       = 27017
	DefaultBindIP     = "127.0.0.1"
	DefaultDBPath     = "/data/db"
	DefaultSyncDelay  = 60.0
	DefaultCompressor = "snappy"
	DefaultEngine     = "wiredTiger"
	// DefaultMaxConns is mongod's net.maxIncomingConnections default.
	DefaultMaxConns = 1000000
	// DefaultSlowMS is mongod's operationProfiling.slowOpThresholdMs.
	DefaultSlowMS = 100
)

// Param is one --setParameter name=value.
type Param struct {
	Name, Value string
}

// Options is the resolved configuration.
type Options struct {
	// Help and Version are set when --help/-h or --version was given; the
	// other fields are then left at their zero values.
	Help, Version bool

	Port   int
	BindIP []string
	// BindIPAll is set by --bind_ip_all / net.bindIpAll (BindIP is then
	// 0.0.0.0).
	BindIPAll bool
	// IPv6 is --ipv6 / net.ipv6: without it only IPv4 addresses are
	// bound, as mongod does.
	IPv6 bool
	// MaxConns is --maxConns / net.maxIncomingConnections.
	MaxConns int
	// ProfileLevel (0, 1, 2), SlowMS and SlowOpSampleRate are the
	// profiler's and slow query log's settings (operationProfiling).
	ProfileLevel     int
	SlowMS           int
	SlowOpSampleRate float64
	DBPath           string
	// StorageEngine is always "wiredTiger" after a successful Parse.
	StorageEngine string
	// NoJournal is set by --nojournal or storage.journal.enabled: false;
	// WiredTiger's log is then disabled.
	NoJournal bool
	Quiet     bool
	// Verbosity is systemLog.verbosity: -v is 1, -vv is 2, ...
	Verbosity int

	// CacheSizeGB is the value given, 0 when the default applies.
	CacheSizeGB            float64
	EngineConfigString     string
	CollectionConfigString string
	IndexConfigString      string
	JournalCompressor      string
	BlockCompressor        string
	PrefixCompression      bool
	SyncDelay              float64

	SetParameters []Param
	// LogPath is systemLog.path; LogDestination is "file" when it is set.
	LogPath        string
	LogDestination string
	LogAppend      bool
	PIDFilePath    string
	ConfigFile     string
	// Pprof is --pprof host:port, minimongod's own debugging listener
	// (Go's /debug/pprof handlers); loopback addresses only.
	Pprof string

	// Argv is a copy of the arguments given to Parse.
	Argv []string
	// Parsed mirrors getCmdLineOpts' "parsed" field: only the options that
	// were given, canonicalized and nested, keys sorted as mongod does.
	Parsed bson.D
}

// Parse parses args (without argv[0]) and the config file they name.
// totalRAMBytes is accepted for symmetry with the cache helpers and is not
// needed to parse. Bad input yields a *UsageError.
func Parse(args []string, totalRAMBytes uint64) (*Options, error) {
	_ = totalRAMBytes
	e, err := gather(args)
	if err != nil {
		return nil, err
	}
	if e[keyHelp] == true {
		return &Options{Help: true, Argv: copyArgs(args)}, nil
	}
	if e[keyVersion] == true {
		return &Options{Version: true, Argv: copyArgs(args)}, nil
	}
	if err := validate(e); err != nil {
		return nil, err
	}
	if err := canonicalize(e); err != nil {
		return nil, err
	}
	o, err := store(e)
	if err != nil {
		return nil, err
	}
	o.Argv = copyArgs(args)
	o.Parsed = buildParsed(e)
	return o, nil
}

// copyArgs returns a copy of args.
func copyArgs(args []string) []string {
	return append([]string{}, args...)
}

// gather runs the parser stage: command line, then the config file, then
// the merge. Every failure here is a StageParse error.
func gather(args []string) (env, error) {
	cmd, err := parseCommandLine(args)
	if err != nil {
		return nil, parseError(err.Error())
	}
	file := env{}
	if path, ok := cmd[keyConfig].(string); ok {
		file, err = readConfigFile(path)
		if err != nil {
			return nil, parseError(err.Error())
		}
	}
	return merge(file, cmd), nil
}

// validate applies the constraints mongod checks before canonicalizing
// (idl validators, conflicts, validateMongodOptions). Failures are
// StageInit errors.
func validate(e env) error {
	checks := []func(env) string{
		checkVerboseString, checkPortRange, checkSyncDelay, checkCacheSize,
		checkCompressors, checkBindConflict, checkJournalConflict, checkPprof,
	}
	for _, check := range checks {
		if reason := check(e); reason != "" {
			return initError(reason)
		}
	}
	return nil
}

// checkPprof requires --pprof to be a loopback host:port: the profiling
// handlers are for the person debugging on this machine only.
func checkPprof(e env) string {
	v, ok := e[keyPprof].(string)
	if !ok {
		return ""
	}
	host, _, err := net.SplitHostPort(v)
	if err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return ""
		}
	}
	return "--pprof must be a loopback host:port (127.0.0.1:6060 or [::1]:6060), not " + strconv.Quote(v)
}

// checkVerboseString requires --verbose's value to be all v's
// (server_options_helpers.cpp validateBaseOptions).
func checkVerboseString(e env) string {
	v, ok := e[keyVerbose].(string)
	if !ok || v == "true" || strings.Trim(v, "v") == "" {
		return ""
	}
	return `The "verbose" option string cannot contain any characters other than "v"`
}

// checkPortRange is net.port's validator {gte: 0, lte: 65535}.
func checkPortRange(e env) string {
	p, ok := e[keyPort].(int32)
	if !ok {
		return ""
	}
	return boundReason(keyPort, float64(p), 0, 65535, "0", "65535")
}

// maxSyncDelaySecs is StorageGlobalParams::kMaxSyncdelaySecs in 4.4.
const maxSyncDelaySecs = 9.0 * 1000.0 * 1000.0

// checkSyncDelay is storage.syncPeriodSecs' validator {gte: 0, lte: 9e6}.
func checkSyncDelay(e env) string {
	f, ok := e[keySyncPeriod].(float64)
	if !ok {
		return ""
	}
	return boundReason(keySyncPeriod, f, 0, maxSyncDelaySecs, "0", formatDouble(maxSyncDelaySecs))
}

// checkCacheSize is cacheSizeGB's validator {gte: 0.25, lte: 10000}.
func checkCacheSize(e env) string {
	f, ok := e[keyCacheSize].(float64)
	if !ok {
		return ""
	}
	return boundReason(keyCacheSize, f, 0.25, 10000, "0.25", "10000")
}

// boundReason is BoundaryKeyConstraint's message (constraints.h).
func boundReason(key string, v, lo, hi float64, loText, hiText string) string {
	if !(v >= lo) {
		return key + " must be greater than or equal to " + loText
	}
	if !(v <= hi) {
		return key + " must be less than or equal to " + hiText
	}
	return ""
}

// checkCompressors is WiredTigerGlobalOptions::validateWiredTigerCompressor.
func checkCompressors(e env) string {
	for _, key := range []string{keyJournalComp, keyBlockComp} {
		v, ok := e[key].(string)
		if ok && !validCompressor(v) {
			return "Compression option must be one of: 'none', 'snappy', 'zlib', or 'zstd'"
		}
	}
	return ""
}

// validCompressor accepts the four names case-insensitively, as mongod.
func validCompressor(v string) bool {
	for _, c := range []string{"none", "snappy", "zlib", "zstd"} {
		if strings.EqualFold(v, c) {
			return true
		}
	}
	return false
}

// checkBindConflict is bind_ip_all's "conflicts: bind_ip"
// (MutuallyExclusiveKeyConstraint).
func checkBindConflict(e env) string {
	_, ip := e[keyBindIP]
	_, all := e[keyBindIPAll]
	if ip && all {
		return keyBindIP + " is not allowed when " + keyBindIPAll + " is specified"
	}
	return ""
}

// checkJournalConflict rejects --journal with --nojournal
// (mongod_options.cpp validateMongodOptions).
func checkJournalConflict(e env) string {
	_, j := e[keyJournal]
	_, nj := e[keyNoJournal]
	if j && nj {
		return "Can't specify both --journal and --nojournal options."
	}
	return ""
}

// canonicalize rewrites command-line-only spellings into their config
// file keys, as canonicalizeBaseOptions/canonicalizeMongodOptions do.
func canonicalize(e env) error {
	canonicalizeVerbosity(e)
	if err := canonicalizeLogpath(e); err != nil {
		return err
	}
	if nj, ok := e[keyNoJournal].(bool); ok {
		e[keyJournal] = !nj
		delete(e, keyNoJournal)
	}
	return nil
}

// canonicalizeVerbosity folds --verbose and the hidden -vv.. switches into
// systemLog.verbosity, keeping the highest level.
func canonicalizeVerbosity(e env) {
	level := -1
	verbose, hasVerbose := e[keyVerbose].(string)
	for s := ""; len(s) <= maxHiddenV; s += "v" {
		if s != "" && e[s] == true && len(s) > level {
			level = len(s)
		}
		if hasVerbose && (s == verbose || (s == "v" && verbose == "true")) && len(s) > level {
			level = len(s)
		}
		delete(e, s)
	}
	if level != -1 {
		e[keyVerbosity] = int32(level)
		delete(e, keyVerbose)
	}
}

// canonicalizeLogpath turns --logpath into systemLog.destination "file"
// plus systemLog.path.
func canonicalizeLogpath(e env) error {
	p, ok := e[keyLogpath].(string)
	if !ok {
		return nil
	}
	if p == "" {
		return initError("logpath cannot be empty if supplied")
	}
	e[keyLogDest] = "file"
	e[keyLogPath] = p
	delete(e, keyLogpath)
	return nil
}
