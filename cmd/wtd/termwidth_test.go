//go:build linux

package main

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair; the test closes both ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// Progress bars are drawn on a terminal that reports a width; one of
// width 0, and a file that is no terminal, get the plain lines.
func TestBarsNeedATerminalWithAWidth(t *testing.T) {
	_, s := openPTY(t)
	for _, c := range []struct {
		cols uint16
		want bool
	}{{0, false}, {80, true}, {1, true}} {
		if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: c.cols}); err != nil {
			t.Fatal(err)
		}
		if got := barsFit(s); got != c.want {
			t.Errorf("terminal of width %d: barsFit = %v, want %v", c.cols, got, c.want)
		}
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if barsFit(f) {
		t.Error("barsFit of a plain file = true")
	}
}
