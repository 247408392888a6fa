package hostctl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// dropFixture is a proc root with meminfo and, when withFile, a regular
// sys/vm/drop_caches file holding "0\n".
func dropFixture(t *testing.T, withFile bool) (*Host, string) {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "meminfo"), "MemTotal: 100 kB\nCached: 40 kB\n")
	path := filepath.Join(root, "sys", "vm", "drop_caches")
	if withFile {
		writeFile(t, path, "0\n")
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Host{ProcRoot: root, EUID: func() int { return 0 }}, path
}

func TestDropCachesWrites(t *testing.T) {
	h, path := dropFixture(t, true)
	res := h.DropCaches(context.Background())
	if !res.Dropped {
		t.Fatalf("Dropped = false, reason %q", res.Reason)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "3\n" {
		t.Errorf("drop_caches holds %q, want %q", b, "3\n")
	}
	if res.CachedBefore == nil || res.CachedAfter == nil || *res.CachedBefore != 40*1024 || *res.CachedAfter != 40*1024 {
		t.Errorf("Cached before/after = %s/%s, want 40960/40960", orNil(res.CachedBefore), orNil(res.CachedAfter))
	}
	if res.Reason != "host-wide: dropped the page cache of the whole host" {
		t.Errorf("Reason = %q", res.Reason)
	}
}

func TestDropCachesNotRoot(t *testing.T) {
	h, path := dropFixture(t, true)
	h.EUID = func() int { return 1000 }
	res := h.DropCaches(context.Background())
	if res.Dropped {
		t.Fatal("Dropped = true without root")
	}
	if want := "drop_caches needs root: running as uid 1000"; res.Reason != want {
		t.Errorf("Reason = %q, want %q", res.Reason, want)
	}
	if b, _ := os.ReadFile(path); string(b) != "0\n" {
		t.Errorf("drop_caches was written: %q", b)
	}
	if res.CachedBefore == nil || *res.CachedBefore != 40*1024 {
		t.Errorf("CachedBefore = %s, want 40960", orNil(res.CachedBefore))
	}
}

func TestDropCachesMissingFile(t *testing.T) {
	h, path := dropFixture(t, false)
	res := h.DropCaches(context.Background())
	if res.Dropped {
		t.Fatal("Dropped = true with no drop_caches file")
	}
	if want := "write " + path + ": no such file or directory"; res.Reason != want {
		t.Errorf("Reason = %q, want %q", res.Reason, want)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("DropCaches created drop_caches")
	}
}

func TestDropCachesReadOnlyDir(t *testing.T) {
	// A read-only directory without the file: nothing may be created and
	// nothing claimed, root or not.
	h, path := dropFixture(t, false)
	if err := os.Chmod(filepath.Dir(path), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Dir(path), 0o755) })
	res := h.DropCaches(context.Background())
	if res.Dropped {
		t.Fatalf("Dropped = true in a read-only directory")
	}
	if res.Reason == "" {
		t.Error("no reason given")
	}
}

func TestDropCachesPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file modes; the wording is covered by TestDropFailureReason")
	}
	h, path := dropFixture(t, true)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	res := h.DropCaches(context.Background())
	if res.Dropped {
		t.Fatal("Dropped = true on a read-only file")
	}
	if want := "write " + path + ": permission denied"; res.Reason != want {
		t.Errorf("Reason = %q, want %q", res.Reason, want)
	}
}

func TestDropCachesCancelled(t *testing.T) {
	h, path := dropFixture(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := h.DropCaches(ctx)
	if res.Dropped {
		t.Fatal("Dropped = true with a cancelled context")
	}
	if b, _ := os.ReadFile(path); string(b) != "0\n" {
		t.Errorf("drop_caches was written: %q", b)
	}
}

func TestDropFailureReason(t *testing.T) {
	const path = "/proc/sys/vm/drop_caches"
	tests := []struct {
		err  error
		want string
	}{
		{&os.PathError{Op: "open", Path: path, Err: syscall.EROFS}, "write /proc/sys/vm/drop_caches: read-only file system"},
		{&os.PathError{Op: "open", Path: path, Err: syscall.EACCES}, "write /proc/sys/vm/drop_caches: permission denied"},
		{&os.PathError{Op: "write", Path: path, Err: syscall.EINVAL}, "write /proc/sys/vm/drop_caches: invalid argument"},
	}
	for _, tt := range tests {
		if got := dropFailureReason(path, tt.err); got != tt.want {
			t.Errorf("dropFailureReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func orNil(p *uint64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
