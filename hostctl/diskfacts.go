package hostctl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/shirou/gopsutil/v4/disk"
)

// DiskFacts describes the filesystem and device that hold a data path.
type DiskFacts struct {
	Path       string `json:"path"`
	Device     string `json:"device"`
	Fstype     string `json:"fstype"`
	Mountpoint string `json:"mountpoint"`
	SizeBytes  uint64 `json:"size_bytes"`
	FreeBytes  uint64 `json:"free_bytes"`
	// Rotational is true for a spinning disk, false for SSD/NVMe, and nil
	// when <sys>/block/<dev>/queue/rotational could not be found (overlay,
	// tmpfs, network filesystems).
	Rotational *bool `json:"rotational"`
}

// diskFacts finds the mount that holds path (or its nearest existing
// ancestor, since a dbpath may not exist yet), its size and its device.
func (h *Host) diskFacts(ctx context.Context, path string) (DiskFacts, error) {
	df := DiskFacts{Path: path}
	existing, err := existingAncestor(path)
	if err != nil {
		return df, err
	}
	var errs []error
	if u, err := disk.UsageWithContext(ctx, existing); err == nil {
		df.SizeBytes, df.FreeBytes = u.Total, u.Free
	} else {
		errs = append(errs, fmt.Errorf("statfs %s: %w", existing, err))
	}
	parts, err := disk.PartitionsWithContext(h.psContext(ctx), true)
	if err != nil {
		errs = append(errs, fmt.Errorf("read mounts: %w", err))
		return df, errors.Join(errs...)
	}
	mounts := make([]mount, len(parts))
	for i, p := range parts {
		mounts[i] = mount{Device: p.Device, Mountpoint: p.Mountpoint, Fstype: p.Fstype}
	}
	if m, ok := mountFor(mounts, existing); ok {
		df.Device, df.Mountpoint, df.Fstype = m.Device, m.Mountpoint, m.Fstype
		df.Rotational = h.rotational(m.Device)
	}
	return df, errors.Join(errs...)
}

// existingAncestor returns the absolute, symlink-free form of path or of
// its nearest ancestor that exists.
func existingAncestor(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		p = parent
	}
}

// mount is one line of the mount table.
type mount struct {
	Device, Mountpoint, Fstype string
}

// mountFor picks the mount with the longest mountpoint that contains path;
// of equal mountpoints the last (the one on top) wins.
func mountFor(mounts []mount, path string) (mount, bool) {
	var best mount
	found := false
	for _, m := range mounts {
		if !containsPath(m.Mountpoint, path) {
			continue
		}
		if !found || len(m.Mountpoint) >= len(best.Mountpoint) {
			best, found = m, true
		}
	}
	return best, found
}

func containsPath(dir, path string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// partitionSuffix matches the partition number of sda2, nvme0n1p2, mmcblk0p1.
var partitionSuffix = regexp.MustCompile(`^(.*[0-9])p[0-9]+$|^(.*[a-z])[0-9]+$`)

// rotational reads queue/rotational of the whole disk behind device
// (/dev/sda2 -> sda), or returns nil when it cannot be found.
func (h *Host) rotational(device string) *bool {
	if !strings.HasPrefix(device, "/dev/") {
		return nil
	}
	name := strings.ReplaceAll(strings.TrimPrefix(device, "/dev/"), "/", "!")
	candidates := []string{name}
	// On a real sysfs, class/block/<part> links into its disk's directory.
	if target, err := filepath.EvalSymlinks(h.sysPath("class", "block", name)); err == nil {
		if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
			candidates = append(candidates, filepath.Base(filepath.Dir(target)))
		}
	}
	if m := partitionSuffix.FindStringSubmatch(name); m != nil {
		candidates = append(candidates, m[1]+m[2])
	}
	for _, c := range candidates {
		b, err := os.ReadFile(h.sysPath("block", c, "queue", "rotational"))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b)) == "1"
		return &v
	}
	return nil
}
