package hostctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links ResolvePath follows, as the kernel's
// ELOOP does.
const maxLinks = 40

// ResolvePath returns the physical absolute path that path names, the way
// the kernel walks it: symbolic links are followed and ".." goes to the
// parent of the directory a link led to, not of the link. A relative path
// is taken relative to base. The part of the path that does not exist yet
// is appended as written, with "." and ".." applied to it. It fails only on
// a loop of links or an unreadable directory on the way.
func ResolvePath(base, path string) (string, error) {
	if !filepath.IsAbs(path) {
		b, err := filepath.Abs(base)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", path, err)
		}
		path = b + string(filepath.Separator) + path
	}
	links := 0
	return resolveFrom(string(filepath.Separator), strings.Split(path, string(filepath.Separator)), &links)
}

func resolveFrom(cur string, parts []string, links *int) (string, error) {
	missing := false // cur does not exist: nothing below it can be a link
	for _, part := range parts {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			if missing {
				_, err := os.Lstat(cur)
				missing = errors.Is(err, os.ErrNotExist)
			}
			continue
		}
		next := filepath.Join(cur, part)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, os.ErrNotExist):
			missing, cur = true, next
		case err != nil:
			return "", fmt.Errorf("resolve %s: %w", next, err)
		case fi.Mode()&os.ModeSymlink != 0:
			if *links++; *links > maxLinks {
				return "", fmt.Errorf("resolve %s: too many levels of symbolic links", next)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", fmt.Errorf("resolve %s: %w", next, err)
			}
			start := cur
			if filepath.IsAbs(target) {
				start = string(filepath.Separator)
			}
			if cur, err = resolveFrom(start, strings.Split(target, string(filepath.Separator)), links); err != nil {
				return "", err
			}
			if _, err := os.Lstat(cur); errors.Is(err, os.ErrNotExist) {
				missing = true // a dangling link
			}
		default:
			cur = next
		}
	}
	return cur, nil
}

// Within reports whether path lies inside root or is root; both must be
// clean absolute paths (as ResolvePath returns them).
func Within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
