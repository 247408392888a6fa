// Package hostctl owns the host and the mongod processes that wtd starts.
//
// It reads memory, CPU, disk and process counters from /proc and /sys through
// the configurable roots of a [Host] (so tests run on fixture trees under
// testdata/), drops the OS page cache, gathers the host facts a run records,
// and starts, stops and restarts mongod-compatible servers on loopback
// addresses only. It also holds the sandbox of what a playbook hands a
// server: flags (CheckArgs), server parameters (CheckParameter), WiredTiger
// configuration strings, read as WiredTiger reads them (CheckWTConfig), and
// command documents (CheckCommand). Its table of knobs ([Knobs],
// [KnobRules]) is the one place each server setting wtd can turn is
// defined: flag, config key, parameter or WiredTiger key, type, range,
// default and restart need; the settings checks and `wtd knobs` read it.
package hostctl
