//go:build !unix

package store

// processAlive cannot tell on this system, so it never calls a run abandoned.
func processAlive(pid int) bool { return pid > 0 }
