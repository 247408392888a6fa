// Package sysmon keeps the Go runtime's monitor thread awake between a
// server's requests (see KeepAwake): minimongod and the benchmarks' floor
// server both start with it, so that their figures compare.
package sysmon

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Setting keeps the Go runtime's monitor thread (sysmon) from its
// deep sleep. By default sysmon sleeps whenever every P is idle, and the
// first system call after that (each request's read, at a client's pace)
// wakes it with a futex, after which it polls every 20 µs for a
// millisecond. Between requests a server is idle, so that is one futex
// wake-up and a burst of timer wake-ups per request: on a virtual machine,
// where waking a halted CPU is an exit to the host, about 15 µs of CPU per
// point read (measured with BenchmarkPointRead on a 2-core VM: 70 -> 54
// µs). With any schedtrace period set sysmon never deep-sleeps and backs
// off to one wake-up every 10 ms instead. The period is the largest the
// runtime takes (about 24.8 days); a host up for longer than that gets one
// SCHED line on the error output at start and then one per period, and a
// crash of the Go runtime itself prints the scheduler's state with its
// stacks.
const Setting = "schedtrace=2147483647"

// reexecEnv is the variable that, set, marks the process as re-executed
// (and stops a loop if the setting does not take).
const reexecEnv = "MINIMONGOD_SYSMON"

// KeepAwake re-executes the program with Setting added to
// GODEBUG, unless GODEBUG already names a schedtrace (any positive period
// keeps sysmon awake too; schedtrace=0 keeps Go's default) or this process
// is the re-executed one. The process keeps
// its pid, arguments and everything else of its environment. It returns
// only if it did not re-execute: the reason, or "" when the setting is in
// effect.
func KeepAwake() string {
	godebug := os.Getenv("GODEBUG")
	reexecuted := os.Getenv(reexecEnv) != ""
	os.Unsetenv(reexecEnv)
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "schedtrace="); ok {
			// Any period keeps sysmon awake (and prints a trace every
			// period); 0 or a value the runtime does not take, Go's
			// default.
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n > 0 {
				return ""
			}
			return "GODEBUG sets " + kv
		}
	}
	if reexecuted {
		return "GODEBUG was set but did not reach the re-executed process"
	}
	exe, err := executable()
	if err != nil {
		return "cannot find the executable: " + err.Error()
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + Setting, reexecEnv + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(exe, os.Args, env)
	return "cannot re-execute " + exe + ": " + err.Error()
}

// executable returns the path to execute again: the one this process was
// started by (os.Args[0], looked up in PATH) when it is still the running
// file, else the running file's own path. Not /proc/self/exe: the process's
// name (ps, pgrep) is the last element of the path executed, and one
// started as mongod through a link keeps that name.
func executable() (string, error) {
	self, err := os.Stat("/proc/self/exe")
	if err == nil {
		if p, lerr := exec.LookPath(os.Args[0]); lerr == nil {
			if st, serr := os.Stat(p); serr == nil && os.SameFile(self, st) {
				return p, nil
			}
		}
	}
	return os.Executable()
}
