package engine

import (
	"fmt"
	"strings"

	"wtd/hostctl"
)

// checkDBPath resolves the dbpath a playbook gave (relative paths are
// relative to the run's directory; symbolic links and ".." are resolved as
// the kernel would) and returns it when it lies inside the run's directory
// or a directory of Config.AllowDirs. The server is started on the
// resolved path, the one that was checked.
func (r *Run) checkDBPath(path string) (string, error) {
	runDir, err := hostctl.ResolvePath(".", r.dir)
	if err != nil {
		return "", fmt.Errorf("check dbpath %s: %w", path, err)
	}
	abs, err := hostctl.ResolvePath(runDir, path)
	if err != nil {
		return "", fmt.Errorf("check dbpath %s: %w", path, err)
	}
	roots := []string{"the run directory " + runDir}
	if hostctl.Within(abs, runDir) {
		return abs, nil
	}
	for _, d := range r.cfg.AllowDirs {
		root, err := hostctl.ResolvePath(".", d)
		if err != nil {
			continue
		}
		if hostctl.Within(abs, root) {
			return abs, nil
		}
		roots = append(roots, root)
	}
	allowed := "no directory is allowed with wtd run --allow-dir"
	if len(roots) > 1 {
		allowed = "the directories allowed with wtd run --allow-dir: " + strings.Join(roots[1:], ", ")
	}
	shown := path
	if abs != path {
		shown = fmt.Sprintf("%s (resolved: %s)", path, abs)
	}
	return "", fmt.Errorf("dbpath %s is outside %s, and %s; omit dbpath to let wtd make one in the run directory, or have the operator allow its directory with wtd run --allow-dir DIR",
		shown, roots[0], allowed)
}
