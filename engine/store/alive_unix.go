//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// processAlive reports whether a process with this pid exists (signal 0
// checks without sending anything; EPERM means it exists but is not ours).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// fileID names a file by its device and inode ("dev:ino"), the same in
// every mount namespace; "" when path cannot be looked at.
func fileID(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", sys.Dev, sys.Ino)
	}
	return ""
}

// lockFree tests the flock on the lock file at path: it takes the lock
// without waiting and, when it gets it, gives it up at once. known is
// false when the file cannot be tested: missing, not readable, or not the
// file id names (when id is not "": another file took its place, or the
// path means another file in this mount namespace).
func lockFree(path, id string) (free, known bool) {
	f, err := os.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	if id != "" {
		var st syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &st) != nil || fmt.Sprintf("%d:%d", st.Dev, st.Ino) != id {
			return false, false
		}
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return true, true
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, true
	}
	return false, false
}
