// Package testbin builds the project's binaries for integration tests, once
// per test process: minimongod (cgo) and wtd (CGO_ENABLED=0). Tests import
// it from _test files only.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

type binary struct {
	once sync.Once
	path string
	err  error
}

var (
	minimongod binary
	wtd        binary
)

// Minimongod returns the path of a minimongod built from this checkout.
// WTD_TEST_MINIMONGOD, if set, names a prebuilt one to use instead (for
// example while the server's own package is being changed).
func Minimongod(t testing.TB) string {
	t.Helper()
	return minimongod.get(t, "WTD_TEST_MINIMONGOD", "minimongod", "wtd/cmd/minimongod", "1")
}

// Wtd returns the path of a wtd built from this checkout.
func Wtd(t testing.TB) string {
	t.Helper()
	return wtd.get(t, "WTD_TEST_WTD", "wtd", "wtd/cmd/wtd", "0")
}

// get builds pkg into a per-user directory under the temp dir, one copy per
// test process, so concurrent test processes do not trip over each other.
func (b *binary) get(t testing.TB, envVar, name, pkg, cgo string) string {
	t.Helper()
	b.once.Do(func() {
		if p := os.Getenv(envVar); p != "" {
			b.path = p
			return
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("wtd-testbin-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.err = fmt.Errorf("make build dir: %w", err)
			return
		}
		removeStale(dir, name)
		tmp := filepath.Join(dir, fmt.Sprintf("%s.%d", name, os.Getpid()))
		cmd := exec.Command("go", "build", "-buildvcs=auto", "-o", tmp, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %w\n%s", pkg, err, out)
			return
		}
		// Each process keeps its own copy, removed by a later process once
		// this one is gone.
		b.path = tmp
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// removeStale deletes the copies of name left by test processes that ended.
func removeStale(dir, name string) {
	matches, _ := filepath.Glob(filepath.Join(dir, name+".*"))
	for _, m := range matches {
		var pid int
		if _, err := fmt.Sscanf(filepath.Ext(m), ".%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.Remove(m)
		}
	}
}
