// Package testhost gives tests the host they may act on. Dropping the page
// cache is host-wide: it spoils every other measurement on the machine, so
// tests do it only when WTD_TEST_HOST=1 says the machine is theirs (CI sets
// it). Otherwise they get the real host with drop_caches pointed at a plain
// file and root's uid, so the same code runs to the end without touching
// the host. Tests import it from _test files only.
package testhost

import (
	"os"
	"path/filepath"
	"testing"

	"wtd/hostctl"
)

// EnvVar opts in to host-wide acts in tests.
const EnvVar = "WTD_TEST_HOST"

// HostWide reports whether tests may act on the whole host.
func HostWide() bool { return os.Getenv(EnvVar) == "1" }

// New returns the host a test runs on (see the package comment). With a
// stand-in, DropFile names the file that drop_caches writes go to.
func New(t testing.TB) *hostctl.Host {
	t.Helper()
	h := hostctl.NewHost()
	if HostWide() {
		return h
	}
	f := filepath.Join(t.TempDir(), "drop_caches")
	if err := os.WriteFile(f, []byte("0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.DropCachesFile = f
	h.EUID = func() int { return 0 }
	return h
}

// Dropped reports whether h's drop_caches file holds the drop request; on
// the real host (HostWide) it reports true, since the kernel's file does
// not keep what was written.
func Dropped(t testing.TB, h *hostctl.Host) bool {
	t.Helper()
	if h.DropCachesFile == "" {
		return true
	}
	b, err := os.ReadFile(h.DropCachesFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) == "3\n"
}
