package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Owner identifies the process that writes a run. A pid alone does not:
// pids are reused, and a pid means a process only in its pid namespace (a
// wtd that runs as pid 1 in a container is not the host's pid 1).
type Owner struct {
	PID    int    `json:"pid"`
	Host   string `json:"host"`
	BootID string `json:"boot_id,omitempty"` // the host's boot; "" where the system does not say
	// Start is when the process started, in clock ticks after boot
	// (/proc/PID/stat field 22); 0 when unknown.
	Start int64 `json:"start_ticks,omitempty"`
	// PIDNS is the process's pid namespace as it saw it
	// (/proc/self/ns/pid: "pid:[4026531836]"); "" when unknown.
	PIDNS string `json:"pid_ns,omitempty"`
}

// Where Linux says who this process is.
const (
	procRoot   = "/proc"
	bootIDPath = "/proc/sys/kernel/random/boot_id" // a random id that changes with every boot
)

// ThisProcess returns this process as runs record their owner.
func ThisProcess() Owner {
	host, _ := os.Hostname() // "" still tells runs of this host apart from others'
	boot, _ := os.ReadFile(bootIDPath)
	o := Owner{PID: os.Getpid(), Host: host, BootID: strings.TrimSpace(string(boot))}
	if st, err := readProcStat(procRoot + "/self/stat"); err == nil {
		o.Start = st.start
	}
	o.PIDNS, _ = os.Readlink(procRoot + "/self/ns/pid")
	return o
}

// OwnerGone reports whether the process o names has certainly ended, and
// why in words (see Owner.gone).
func OwnerGone(o Owner) (bool, string) {
	return ThisProcess().gone(o)
}

// sameMachine reports whether o ran on this machine, where it can be
// checked: the same host name and, when both are known, the same boot id.
// Another host name on the same boot is a container of this host (its own
// host name, the host's kernel); it can be checked only when o names its
// pid namespace, since a pid alone may mean another namespace's process.
// rebooted is true when o ran on this host before its last boot.
func (obs Owner) sameMachine(o Owner) (same, rebooted bool) {
	sameBoot := o.BootID != "" && o.BootID == obs.BootID
	if o.BootID != "" && obs.BootID != "" && !sameBoot {
		return false, o.Host == obs.Host
	}
	return o.Host == obs.Host || sameBoot && o.PIDNS != "", false
}

// is reports whether o is this process (as far as o says).
func (obs Owner) is(o Owner) bool {
	return o.PID == obs.PID && (o.PIDNS == "" || o.PIDNS == obs.PIDNS) && (o.Start == 0 || o.Start == obs.Start)
}

// gone reports whether the process o names has certainly ended, seen from
// obs (this process), and why. A process of another machine cannot be checked and is
// never called gone, nor is one this process cannot see (another pid
// namespace that it cannot look into).
func (obs Owner) gone(o Owner) (bool, string) {
	same, rebooted := obs.sameMachine(o)
	if rebooted {
		return true, "the host has rebooted since"
	}
	if !same || obs.is(o) {
		return false, ""
	}
	if o.PIDNS == "" || o.PIDNS == obs.PIDNS {
		return processGone(o.PID, o.Start, fmt.Sprintf("pid %d", o.PID))
	}
	// Another pid namespace: find the process by its pid there.
	here, found, complete := findInPIDNS(o.PIDNS, o.PID)
	switch {
	case found:
		return processGone(here, o.Start, fmt.Sprintf("pid %d of pid namespace %s (pid %d here)", o.PID, o.PIDNS, here))
	case complete && obs.PIDNS == initialPIDNS:
		return true, fmt.Sprintf("pid %d of pid namespace %s is gone", o.PID, o.PIDNS)
	}
	return false, ""
}

// processGone reports whether pid (as seen here) is not the process that
// started at start (clock ticks; 0: unknown, any process will do): no
// such pid, a zombie, or another process that took the pid since.
func processGone(pid int, start int64, what string) (bool, string) {
	if pid <= 0 {
		return true, what + " is not a process"
	}
	st, err := readProcStat(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, what + " is gone"
	case err != nil:
		// No /proc here (or not readable): signal 0 still tells.
		if !processAlive(pid) {
			return true, what + " is gone"
		}
		return false, ""
	case st.state == 'Z' || st.state == 'X':
		return true, what + " has ended"
	case start != 0 && st.start != start:
		return true, what + " is another process now"
	}
	return false, ""
}

// procStat is what liveness needs of /proc/PID/stat.
type procStat struct {
	state byte  // field 3: R, S, D, Z (zombie), X (dead), ...
	start int64 // field 22: start time, clock ticks after boot
}

// readProcStat reads /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("%s: no ')' after the command name", path)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("%s: %d fields after the command name, want 20 or more", path, len(f))
	}
	start, err := strconv.ParseInt(f[22-3], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("%s: field 22 (start time) %q: %w", path, f[22-3], err)
	}
	return procStat{state: f[0][0], start: start}, nil
}

// findInPIDNS looks for the process that is nsPID in pid namespace ns and
// returns its pid here. complete is false when a process that could be it
// could not be looked at (another user's, without the right to), or this
// system does not say which pids a process has in each namespace.
func findInPIDNS(ns string, nsPID int) (here int, found, complete bool) {
	entries, err := os.ReadDir(procRoot)
	if err != nil || nsPIDs("self") == nil {
		return 0, false, false
	}
	complete = true
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// Only a process of a namespace below this one whose innermost
		// pid is nsPID can be it.
		if ids := nsPIDs(e.Name()); len(ids) < 2 || ids[len(ids)-1] != nsPID {
			continue
		}
		link, err := os.Readlink(procRoot + "/" + e.Name() + "/ns/pid")
		switch {
		case errors.Is(err, fs.ErrNotExist): // it ended meanwhile
		case err != nil:
			complete = false
		case link == ns:
			return pid, true, true
		}
	}
	return 0, false, complete
}

// nsPIDs returns the pids of process proc (a pid, or "self") in each pid
// namespace it is in, from the one of this /proc to its own (the NSpid
// line of its status).
func nsPIDs(proc string) []int {
	b, err := os.ReadFile(procRoot + "/" + proc + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		var ids []int
		for _, f := range strings.Fields(rest) {
			id, err := strconv.Atoi(f)
			if err != nil {
				return nil
			}
			ids = append(ids, id)
		}
		return ids
	}
	return nil
}

// initialPIDNS is the host's first pid namespace, from which every
// process of the host can be seen: Linux gives it a fixed inode
// (PROC_PID_INIT_INO).
const initialPIDNS = "pid:[4026531836]"
