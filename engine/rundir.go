package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"wtd/engine/store"
)

// ownerFile marks a run directory with the process that owns it, so that
// a later wtd can tell a live run's directory from one left by a killed
// process.
const ownerFile = ".wtd-owner"

// Artifact limits: files a playbook writes are kept in the results database
// up to these sizes; larger ones stay in the run directory.
const (
	maxArtifactBytes      = 16 << 20
	maxRunArtifactsBytes  = 64 << 20
	runDirPermissions     = 0o700
	runsSubdir            = "runs"
	staleRunDirEventLimit = 20
)

type dirOwner struct {
	store.Owner
	RunID int64  `json:"run_id"`
	DB    string `json:"db,omitempty"`
}

// RunsDir is where the run directories of a state directory live.
func RunsDir(stateDir string) string { return filepath.Join(stateDir, runsSubdir) }

// makeRunDir creates the directory of run id under stateDir/runs and marks
// it as this process's. A directory of the same name left by a dead process
// is removed first; one of a live process (another database's run with the
// same id) makes the name take a suffix.
func makeRunDir(stateDir string, id int64, db string) (string, error) {
	base := RunsDir(stateDir)
	if err := os.MkdirAll(base, runDirPermissions); err != nil {
		return "", fmt.Errorf("make run directory: %w", err)
	}
	name := strconv.FormatInt(id, 10)
	for i := 1; ; i++ {
		dir := filepath.Join(base, name)
		err := os.Mkdir(dir, runDirPermissions)
		if errors.Is(err, fs.ErrExist) {
			if stale, _ := runDirStale(dir); stale {
				if rerr := os.RemoveAll(dir); rerr == nil {
					i--
					continue
				}
			}
			name = fmt.Sprintf("%d-%d", id, i)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("make run directory: %w", err)
		}
		b, _ := json.Marshal(dirOwner{Owner: store.ThisProcess(), RunID: id, DB: db})
		if err := os.WriteFile(filepath.Join(dir, ownerFile), b, 0o600); err != nil {
			return "", fmt.Errorf("make run directory: %w", err)
		}
		return dir, nil
	}
}

// runDirStale reports whether dir belongs to a process that has certainly
// ended (store.OwnerGone). A directory without a readable owner is not
// touched.
func runDirStale(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false, err
	}
	var o dirOwner
	if err := json.Unmarshal(b, &o); err != nil {
		return false, err
	}
	gone, _ := store.OwnerGone(o.Owner)
	return gone, nil
}

// RemoveStaleRunDirs deletes the run directories under stateDir whose owner
// process is dead (a wtd killed with SIGKILL leaves its servers' data
// behind) and returns what it removed.
func RemoveStaleRunDirs(stateDir string) ([]string, error) {
	entries, err := os.ReadDir(RunsDir(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for stale run directories: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(RunsDir(stateDir), e.Name())
		if stale, err := runDirStale(dir); err != nil || !stale {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// keepArtifacts stores the files the playbook wrote in the run directory
// (everything but the servers' data and logs and the owner mark) with the
// run, and returns the paths of files left on disk because they were too
// large to keep.
func (r *Run) keepArtifacts(ctx context.Context, skip map[string]bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable parts are skipped, not fatal
		}
		if skip[path] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && d.Name() != ownerFile {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var left []string
	var total int64
	var errs []error
	for _, path := range files {
		rel, _ := filepath.Rel(r.dir, path)
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		a := store.Artifact{Path: rel, Size: st.Size()}
		if st.Size() > maxArtifactBytes || total+st.Size() > maxRunArtifactsBytes {
			a.Note = fmt.Sprintf("too large to keep in the database (limits: %d MB a file, %d MB a run); left at %s",
				maxArtifactBytes>>20, maxRunArtifactsBytes>>20, path)
			left = append(left, path)
		} else if a.Content, err = os.ReadFile(path); err != nil {
			a.Note = "could not be read: " + err.Error()
			left = append(left, path)
		} else if a.Content == nil {
			a.Content = []byte{}
		}
		total += int64(len(a.Content))
		if err := r.cfg.Store.AddArtifact(ctx, r.ID, a); err != nil {
			errs = append(errs, err)
			left = append(left, path)
		}
	}
	return left, errors.Join(errs...)
}

// cleanDir ends the run directory's life: the playbook's files are kept
// with the run, the servers' data and logs are deleted, and the directory
// goes unless files had to stay.
func (r *Run) cleanDir(ctx context.Context, servers []*Server) error {
	skip := map[string]bool{}
	var serverPaths []string
	for _, s := range servers {
		if spec, ok := s.Spec(); ok {
			for _, p := range []string{spec.DBPath, spec.LogPath} {
				// Only what lies in the run directory is the run's to delete:
				// a dbpath under an allowed directory stays.
				if p != "" && strings.HasPrefix(p, r.dir+string(filepath.Separator)) {
					skip[p] = true
					serverPaths = append(serverPaths, p)
				}
			}
		}
	}
	left, err := r.keepArtifacts(ctx, skip)
	if len(left) > 0 {
		r.Eventf("warn", "run", "files left in %s (not kept in the database): %s", r.dir, strings.Join(left, ", "))
	}
	if err != nil {
		r.Eventf("error", "run", "keep the playbook's files: %v", err)
	}
	if !r.ownDir {
		// A directory the caller gave: delete only what the servers wrote in it.
		for _, p := range serverPaths {
			os.RemoveAll(p)
		}
		return err
	}
	if len(left) == 0 {
		if rerr := os.RemoveAll(r.dir); rerr != nil {
			return errors.Join(err, fmt.Errorf("remove run directory: %w", rerr))
		}
		return err
	}
	for _, p := range serverPaths {
		os.RemoveAll(p)
	}
	os.Remove(filepath.Join(r.dir, ownerFile))
	return err
}
