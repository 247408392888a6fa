package hostctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// DropResult says what DropCaches did. Dropped is true only when the write
// to drop_caches succeeded; otherwise Reason says why nothing was dropped.
// CachedBefore and CachedAfter are meminfo's Cached, nil when it could not
// be read (never a made-up 0).
type DropResult struct {
	Dropped      bool    `json:"dropped"`
	CachedBefore *uint64 `json:"cached_before"`
	CachedAfter  *uint64 `json:"cached_after"`
	Reason       string  `json:"reason"`
}

func (h *Host) cached() *uint64 {
	m, err := h.Meminfo()
	if err != nil {
		return nil
	}
	return &m.Cached
}

// DropCaches flushes dirty pages (sync) and asks the kernel to drop the page
// cache, dentries and inodes by writing "3\n" to <proc>/sys/vm/drop_caches.
// It reads Cached from meminfo before and after. It never claims a drop
// that did not happen: without root, on a read-only /proc, or when the file
// is missing, Dropped is false and Reason names the cause.
//
// sync cannot be interrupted; ctx is checked before it and before the write.
func (h *Host) DropCaches(ctx context.Context) DropResult {
	var res DropResult
	res.CachedBefore = h.cached()
	if uid := h.geteuid(); uid != 0 {
		res.CachedAfter = h.cached() // read again: nothing was dropped
		res.Reason = fmt.Sprintf("drop_caches needs root: running as uid %d", uid)
		return res
	}
	if err := ctx.Err(); err != nil {
		res.CachedAfter = h.cached()
		res.Reason = fmt.Sprintf("drop caches: %v", err)
		return res
	}
	if h.DropCachesFile == "" {
		syscall.Sync() // host-wide: not for a stand-in file
	}
	if err := ctx.Err(); err != nil {
		res.CachedAfter = h.cached()
		res.Reason = fmt.Sprintf("drop caches after sync: %v", err)
		return res
	}
	path := h.DropCachesFile
	if path == "" {
		path = h.procPath("sys", "vm", "drop_caches")
	}
	werr := writeExisting(path, "3\n")
	res.CachedAfter = h.cached()
	if werr != nil {
		res.Reason = dropFailureReason(path, werr)
		return res
	}
	res.Dropped = true
	res.Reason = "host-wide: dropped the page cache of the whole host"
	if h.DropCachesFile != "" {
		res.Reason = "wrote the drop request to the stand-in file " + path + ": nothing host-wide was dropped"
	}
	return res
}

// writeExisting writes s to a file that must already exist: drop_caches is
// never created, so a missing file is reported rather than papered over.
func writeExisting(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dropFailureReason words a failed write as "write <path>: <cause>", with
// the bare cause (read-only file system, permission denied, ...) rather
// than the open/write detail of os.PathError.
func dropFailureReason(path string, err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Sprintf("write %s: %v", path, err)
}
