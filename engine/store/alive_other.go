//go:build !unix

package store

// processAlive cannot tell on this system, so it never calls a run abandoned.
func processAlive(pid int) bool { return pid > 0 }

// fileID cannot name files on this system.
func fileID(string) string { return "" }

// lockFree cannot test locks on this system.
func lockFree(string, string) (free, known bool) { return false, false }
