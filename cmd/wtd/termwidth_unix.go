//go:build unix

package main

import (
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// barsFit reports whether f is a terminal that live progress bars can be
// drawn on: one that reports a width. A terminal of width 0 (some CI
// consoles and serial lines) gets the plain progress lines.
func barsFit(f *os.File) bool {
	if !isatty.IsTerminal(f.Fd()) {
		return false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil && ws.Col > 0
}
