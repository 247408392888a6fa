package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"wtd/engine/store"
)

func newArtifactsCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var outDir string
	var force bool
	cmd := &cobra.Command{
		Use:   "artifacts RUN [FILE]...",
		Short: "Write out the files a run's playbook wrote",
		Long: `Artifacts writes the files a playbook wrote in its run directory (with io.open),
which wtd keeps with the run, into --output (default: the current directory),
keeping their relative paths, and prints each path it wrote. Name files to
write only those; without names it writes them all. Existing files are not
overwritten unless --force. wtd show lists a run's files.

` + runArgHelp,
		Example: `  wtd artifacts 12 -o /tmp/run12
  wtd artifacts latest summary.csv`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return withStore(ctx, openStore, func(st *store.Store) error {
				id, err := resolveRun(ctx, st, args[0])
				if err != nil {
					return err
				}
				return writeArtifacts(ctx, env, st, id, args[1:], outDir, force)
			})
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", ".", "directory to write the files into")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite files that exist")
	return cmd
}

// writeArtifacts writes the files of run id (those named, or all) into
// outDir and prints their paths, with control characters escaped.
func writeArtifacts(ctx context.Context, env Env, st *store.Store, id int64, names []string, outDir string, force bool) error {
	list, err := st.Artifacts(ctx, id)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	want := map[string]bool{}
	for _, n := range names {
		want[filepath.Clean(n)] = true
	}
	var kept []string
	for _, a := range list {
		kept = append(kept, a.Path)
	}
	if len(list) == 0 {
		return usageErr("run %d kept no files", id)
	}
	for n := range want {
		found := false
		for _, a := range list {
			found = found || a.Path == n
		}
		if !found {
			return usageErr("run %d has no file %q (its files: %s)", id, n, termLine(strings.Join(kept, ", ")))
		}
	}
	for _, a := range list {
		if len(want) > 0 && !want[a.Path] {
			continue
		}
		if a.Path != filepath.Clean(a.Path) || filepath.IsAbs(a.Path) || strings.HasPrefix(a.Path, "..") {
			return &exitError{code: exitFailed, err: fmt.Errorf("run %d: refusing file name %q", id, a.Path)}
		}
		full, err := st.ArtifactContent(ctx, id, a.Path)
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		if full.Content == nil {
			fmt.Fprintf(env.Stderr, "wtd: %s was not kept: %s\n", termLine(a.Path), a.Note)
			continue
		}
		dst := filepath.Join(outDir, a.Path)
		if _, err := os.Stat(dst); err == nil && !force {
			return usageErr("%s exists: use --force to overwrite it, or -o another directory", termLine(dst))
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		if err := os.WriteFile(dst, full.Content, 0o644); err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		fmt.Fprintf(env.Stdout, "%s\n", termLine(dst))
	}
	return nil
}
