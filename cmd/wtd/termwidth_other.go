//go:build !unix

package main

import (
	"os"

	"github.com/mattn/go-isatty"
)

// barsFit reports whether f is a terminal live progress bars can be drawn
// on.
func barsFit(f *os.File) bool { return isatty.IsTerminal(f.Fd()) }
