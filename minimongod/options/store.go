package options

import (
	"strings"
)

// store copies the canonical environment into Options, applying defaults
// and the checks mongod makes while storing options.
func store(e env) (*Options, error) {
	if err := checkLogDestination(e); err != nil {
		return nil, err
	}
	if err := checkUnsupported(e); err != nil {
		return nil, err
	}
	o := defaults()
	storeGeneral(o, e)
	storeStorage(o, e)
	storeWiredTiger(o, e)
	if o.StorageEngine != DefaultEngine {
		return nil, startupError(18656, "Location18656",
			"Cannot start server with an unknown storage engine: "+o.StorageEngine)
	}
	return o, nil
}

// defaults returns Options holding mongod 4.4's defaults.
func defaults() *Options {
	return &Options{
		Port:              DefaultPort,
		BindIP:            []string{DefaultBindIP},
		DBPath:            DefaultDBPath,
		StorageEngine:     DefaultEngine,
		JournalCompressor: DefaultCompressor,
		BlockCompressor:   DefaultCompressor,
		PrefixCompression: true,
		SyncDelay:         DefaultSyncDelay,
		MaxConns:          DefaultMaxConns,
		SlowMS:            DefaultSlowMS,
		SlowOpSampleRate:  1,
	}
}

// checkLogDestination mirrors storeBaseOptions' systemLog checks.
func checkLogDestination(e env) error {
	dest, hasDest := e[keyLogDest].(string)
	_, hasPath := e[keyLogPath]
	switch {
	case !hasDest && hasPath:
		return initError("Can only use systemLog.path if systemLog.destination is to a file")
	case !hasDest:
		return nil
	case dest == "file" && !hasPath:
		return initError("systemLog.path is required if systemLog.destination is to a file")
	case dest == "file":
		return nil
	case dest == "syslog" && hasPath:
		return initError("Can only use systemLog.path if systemLog.destination is to a file")
	case dest == "syslog":
		return unsupportedError("minimongod does not support logging to syslog " +
			"(systemLog.destination: syslog); use --logpath or standard output")
	}
	return initError("Bad value for systemLog.destination: " + dest +
		". Supported targets are: (syslog|file)")
}

// checkUnsupported rejects mongod features minimongod does not implement.
func checkUnsupported(e env) error {
	if e[keyFork] == true {
		return unsupportedError("minimongod does not fork: --fork (processManagement.fork) " +
			"is not supported; run minimongod in the foreground or under a service manager")
	}
	if _, ok := e[keyReplSet]; ok {
		return unsupportedError("minimongod does not support replication: --replSet " +
			"(replication.replSet) is not supported; run it as a standalone server")
	}
	return nil
}

// storeGeneral fills network, logging and process options.
func storeGeneral(o *Options, e env) {
	if v, ok := e[keyPort].(int32); ok {
		o.Port = int(v)
	}
	if v, ok := e[keyBindIP].(string); ok {
		o.BindIP = splitBindIP(v)
	}
	o.IPv6 = e[keyIPv6] == true
	if e[keyBindIPAll] == true {
		o.BindIPAll = true
		o.BindIP = []string{"0.0.0.0"}
		if o.IPv6 {
			o.BindIP = append(o.BindIP, "::")
		}
	}
	if v, ok := e[keyMaxConns].(int32); ok && v > 0 {
		o.MaxConns = int(v)
	}
	storeProfiling(o, e)
	o.Quiet = e[keyQuiet] == true
	if v, ok := e[keyVerbosity].(int32); ok {
		o.Verbosity = int(v)
	}
	o.LogPath, _ = e[keyLogPath].(string)
	o.LogDestination, _ = e[keyLogDest].(string)
	o.LogAppend = e[keyLogAppend] == true
	o.PIDFilePath, _ = e[keyPIDFile].(string)
	o.ConfigFile, _ = e[keyConfig].(string)
	o.Pprof, _ = e[keyPprof].(string)
	if v, ok := e[keySetParam].([]Param); ok {
		o.SetParameters = append([]Param(nil), v...)
	}
}

// splitBindIP splits net.bindIp on commas (empty items dropped, items
// trimmed); "*" means every IPv4 address.
func splitBindIP(v string) []string {
	if v == "*" {
		return []string{"0.0.0.0"}
	}
	var out []string
	for _, ip := range strings.Split(v, ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			out = append(out, ip)
		}
	}
	return out
}

// storeStorage fills the storage section.
func storeStorage(o *Options, e env) {
	if v, ok := e[keyDBPath].(string); ok {
		o.DBPath = v
	}
	if v, ok := e[keyEngine].(string); ok {
		o.StorageEngine = v
	}
	if v, ok := e[keyJournal].(bool); ok {
		o.NoJournal = !v
	}
	if v, ok := e[keySyncPeriod].(float64); ok {
		o.SyncDelay = v
	}
}

// storeWiredTiger fills the WiredTiger section.
func storeWiredTiger(o *Options, e env) {
	o.CacheSizeGB, _ = e[keyCacheSize].(float64)
	o.EngineConfigString, _ = e[keyEngineConf].(string)
	o.CollectionConfigString, _ = e[keyCollConf].(string)
	o.IndexConfigString, _ = e[keyIndexConf].(string)
	if v, ok := e[keyJournalComp].(string); ok {
		o.JournalCompressor = v
	}
	if v, ok := e[keyBlockComp].(string); ok {
		o.BlockCompressor = v
	}
	if v, ok := e[keyPrefixComp].(bool); ok {
		o.PrefixCompression = v
	}
}

// storeProfiling fills the profiler options: --profile or
// operationProfiling.mode (off, slowOp, all), --slowms and
// --slowOpSampleRate.
func storeProfiling(o *Options, e env) {
	if v, ok := e[keyProfile].(int32); ok {
		o.ProfileLevel = int(v)
	}
	switch e[keyProfileMode] {
	case "slowOp":
		o.ProfileLevel = 1
	case "all":
		o.ProfileLevel = 2
	}
	if v, ok := e[keySlowMS].(int32); ok {
		o.SlowMS = int(v)
	}
	if v, ok := e[keySampleRate].(float64); ok {
		o.SlowOpSampleRate = v
	}
}
