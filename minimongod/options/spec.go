package options

// kind is an option's value type, as mongod's OptionType.
type kind int

const (
	kString    kind = iota // String
	kInt                   // Int (32-bit)
	kDouble                // Double
	kSwitch                // Switch: a flag on the command line, true/false in files
	kBool                  // Bool: takes "true" or "false"
	kStringMap             // StringMap: name=value pairs (setParameter)
)

// spec describes one supported option.
type spec struct {
	key     string // canonical environment key (dotted name)
	cli     string // command line long name; "" when not on the command line
	short   byte   // one-letter alias, 0 if none
	yaml    bool   // accepted in a YAML config file (under key)
	kind    kind
	def     string // default shown in the help text, boost style "(=x)"
	help    string
	section string
	hidden  bool // not listed by Usage
}

// Help sections, in mongod's order.
const (
	secGeneral = "General options"
	secRepl    = "Replication options"
	secStorage = "Storage options"
	secWT      = "WiredTiger options"
)

// verboseImplicit is the implicit value of -v / --verbose.
const verboseImplicit = "v"

// maxHiddenV is the longest hidden "-vvv..." switch mongod registers.
const maxHiddenV = 15

// Keys used by the parser and canonicalization.
const (
	keyHelp        = "help"
	keyVersion     = "version"
	keyConfig      = "config"
	keyVerbose     = "verbose"
	keyVerbosity   = "systemLog.verbosity"
	keyQuiet       = "systemLog.quiet"
	keyPort        = "net.port"
	keyBindIP      = "net.bindIp"
	keyBindIPAll   = "net.bindIpAll"
	keyIPv6        = "net.ipv6"
	keyMaxConns    = "net.maxIncomingConnections"
	keyProfile     = "profile"
	keyProfileMode = "operationProfiling.mode"
	keySlowMS      = "operationProfiling.slowOpThresholdMs"
	keySampleRate  = "operationProfiling.slowOpSampleRate"
	keyLogpath     = "logpath"
	keyLogPath     = "systemLog.path"
	keyLogDest     = "systemLog.destination"
	keyLogAppend   = "systemLog.logAppend"
	keyPIDFile     = "processManagement.pidFilePath"
	keyFork        = "processManagement.fork"
	keySetParam    = "setParameter"
	keyReplSet     = "replication.replSet"
	keyEngine      = "storage.engine"
	keyDBPath      = "storage.dbPath"
	keySyncPeriod  = "storage.syncPeriodSecs"
	keyJournal     = "storage.journal.enabled"
	keyNoJournal   = "nojournal"
	keyCacheSize   = "storage.wiredTiger.engineConfig.cacheSizeGB"
	keyJournalComp = "storage.wiredTiger.engineConfig.journalCompressor"
	keyEngineConf  = "storage.wiredTiger.engineConfig.configString"
	keyBlockComp   = "storage.wiredTiger.collectionConfig.blockCompressor"
	keyCollConf    = "storage.wiredTiger.collectionConfig.configString"
	keyPrefixComp  = "storage.wiredTiger.indexConfig.prefixCompression"
	keyIndexConf   = "storage.wiredTiger.indexConfig.configString"
	keyPprof       = "pprof"
)

// specs lists every supported option in help order. Names, types,
// defaults and descriptions follow mongod 4.4's server_options_general.idl,
// mongod_options_storage.idl and wiredtiger_global_options.idl.
var specs = []spec{
	{key: keyHelp, cli: "help", short: 'h', kind: kSwitch, section: secGeneral,
		help: "Show this usage information"},
	{key: keyVersion, cli: "version", kind: kSwitch, section: secGeneral,
		help: "Show version information"},
	{key: keyConfig, cli: "config", short: 'f', kind: kString, section: secGeneral,
		help: "Configuration file specifying additional options"},
	{key: keyVerbose, cli: "verbose", short: 'v', kind: kString, section: secGeneral,
		help: "Be more verbose (include multiple times for more verbosity e.g. -vvvvv)"},
	{key: keyVerbosity, yaml: true, kind: kInt, section: secGeneral, hidden: true},
	{key: keyQuiet, cli: "quiet", yaml: true, kind: kSwitch, section: secGeneral,
		help: "Quieter output"},
	{key: keyPort, cli: "port", yaml: true, kind: kInt, section: secGeneral,
		help: "Specify port number - 27017 by default"},
	{key: keyLogpath, cli: "logpath", kind: kString, section: secGeneral,
		help: "Log file to send write to instead of stdout - has to be a file, not directory"},
	{key: keyLogPath, yaml: true, kind: kString, section: secGeneral, hidden: true},
	{key: keyLogDest, yaml: true, kind: kString, section: secGeneral, hidden: true},
	{key: keyLogAppend, cli: "logappend", yaml: true, kind: kSwitch, section: secGeneral,
		help: "Append to logpath instead of over-writing"},
	{key: keyPIDFile, cli: "pidfilepath", yaml: true, kind: kString, section: secGeneral,
		help: "Full path to pidfile (if not set, no pidfile is created)"},
	{key: keySetParam, cli: "setParameter", yaml: true, kind: kStringMap, section: secGeneral,
		help: "Set a configurable parameter"},
	{key: keyFork, cli: "fork", yaml: true, kind: kSwitch, section: secGeneral,
		help: "Fork server process (not supported by minimongod)"},
	{key: keyBindIP, cli: "bind_ip", yaml: true, kind: kString, section: secGeneral,
		help: "Comma separated list of ip addresses to listen on - localhost by default"},
	{key: keyBindIPAll, cli: "bind_ip_all", yaml: true, kind: kSwitch, section: secGeneral,
		help: "Bind to all ip addresses"},
	{key: keyIPv6, cli: "ipv6", yaml: true, kind: kSwitch, section: secGeneral,
		help: "Enable IPv6 support (disabled by default)"},
	{key: keyMaxConns, cli: "maxConns", yaml: true, kind: kInt, section: secGeneral,
		help: "Max number of simultaneous connections"},
	{key: keyProfile, cli: "profile", kind: kInt, section: secGeneral,
		help: "0=off 1=slow, 2=all"},
	{key: keyProfileMode, yaml: true, kind: kString, section: secGeneral, hidden: true},
	{key: keySlowMS, cli: "slowms", yaml: true, kind: kInt, section: secGeneral,
		help: "Value of slow for profile and console log"},
	{key: keySampleRate, cli: "slowOpSampleRate", yaml: true, kind: kDouble, section: secGeneral,
		help: "Fraction of slow ops to include in the profile and console log"},
	{key: keyReplSet, cli: "replSet", yaml: true, kind: kString, section: secRepl,
		help: "arg is <setname>[/<optionalseedhostlist>] (not supported by minimongod)"},
	{key: keyEngine, cli: "storageEngine", yaml: true, kind: kString, section: secStorage,
		help: "What storage engine to use - defaults to wiredTiger if no data files present"},
	{key: keyDBPath, cli: "dbpath", yaml: true, kind: kString, section: secStorage,
		help: "Directory for datafiles - defaults to /data/db"},
	{key: keySyncPeriod, cli: "syncdelay", yaml: true, kind: kDouble, def: "60", section: secStorage,
		help: "Seconds between disk syncs (0=never, but not recommended)"},
	{key: keyJournal, cli: "journal", yaml: true, kind: kSwitch, section: secStorage,
		help: "Enable journaling"},
	{key: keyNoJournal, cli: "nojournal", kind: kSwitch, section: secStorage,
		help: "Disable journaling (journaling is on by default for 64 bit)"},
	{key: keyCacheSize, cli: "wiredTigerCacheSizeGB", yaml: true, kind: kDouble, section: secWT,
		help: "Maximum amount of memory to allocate for cache; Defaults to 1/2 of physical RAM"},
	{key: keyJournalComp, cli: "wiredTigerJournalCompressor", yaml: true, kind: kString,
		def: "snappy", section: secWT,
		help: "Use a compressor for log records [none|snappy|zlib|zstd]"},
	{key: keyEngineConf, cli: "wiredTigerEngineConfigString", yaml: true, kind: kString, section: secWT,
		help: "WiredTiger storage engine custom configuration setting"},
	{key: keyBlockComp, cli: "wiredTigerCollectionBlockCompressor", yaml: true, kind: kString,
		def: "snappy", section: secWT,
		help: "Block compression algorithm for collection data [none|snappy|zlib|zstd]"},
	{key: keyCollConf, cli: "wiredTigerCollectionConfigString", yaml: true, kind: kString, section: secWT,
		help: "WiredTiger custom collection configuration settings"},
	{key: keyPrefixComp, cli: "wiredTigerIndexPrefixCompression", yaml: true, kind: kBool,
		def: "1", section: secWT,
		help: "Use prefix compression on row-store leaf pages"},
	{key: keyIndexConf, cli: "wiredTigerIndexConfigString", yaml: true, kind: kString, section: secWT,
		help: "WiredTiger custom index configuration settings"},
	// minimongod's own debugging aid, not mongod's: Go's pprof handlers
	// on a loopback address.
	{key: keyPprof, cli: "pprof", kind: kString, section: secGeneral, hidden: true},
}

// findCLI returns the spec with the given command line long name.
func findCLI(name string) *spec {
	for i := range specs {
		if specs[i].cli != "" && specs[i].cli == name {
			return &specs[i]
		}
	}
	return nil
}

// findShort returns the spec with the given one-letter alias.
func findShort(c byte) *spec {
	for i := range specs {
		if specs[i].short == c {
			return &specs[i]
		}
	}
	return nil
}

// findYAML returns the spec accepted in config files under the dotted key.
func findYAML(key string) *spec {
	for i := range specs {
		if specs[i].yaml && specs[i].key == key {
			return &specs[i]
		}
	}
	return nil
}

// isHiddenV reports whether name is one of mongod's hidden "vv".."v{15}"
// switches.
func isHiddenV(name string) bool {
	if len(name) < 2 || len(name) > maxHiddenV {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] != 'v' {
			return false
		}
	}
	return true
}
