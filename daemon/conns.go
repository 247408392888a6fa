package daemon

import "syscall"

// apiConnCap is the cap on the API's open connections: the configured
// one, and at most a quarter of the file descriptors the process may
// open (nofile, its RLIMIT_NOFILE), so that the rest stay for runs: their
// servers' pipes, client connections and the results database. Go
// raises the soft limit to the hard one at start, so nofile is the hard
// limit unless something lowered it since. A nofile of 0 (unknown)
// leaves the configured cap.
func apiConnCap(configured int, nofile uint64) int {
	if quarter := nofile / 4; nofile > 0 && uint64(configured) > quarter {
		configured = int(quarter)
	}
	return max(configured, 1)
}

// openFileLimit is the process's RLIMIT_NOFILE soft limit (0: unknown).
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}
