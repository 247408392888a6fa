package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// addAllowDirFlag adds the repeatable --allow-dir to cmd, its values
// landing in dirs.
func addAllowDirFlag(cmd *cobra.Command, dirs *[]string) {
	cmd.Flags().StringArrayVar(dirs, "allow-dir", nil,
		"let mongod.start put a dbpath under DIR (besides the run directory), repeatable")
}

// checkAllowDirs returns the --allow-dir directories as absolute paths; each
// must be an existing directory (exit 2 otherwise).
func checkAllowDirs(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, usageErr("--allow-dir %s: %v", d, err)
		}
		st, err := os.Stat(abs)
		if err != nil {
			return nil, usageErr("--allow-dir %s: %v", d, err)
		}
		if !st.IsDir() {
			return nil, usageErr("--allow-dir %s: not a directory", d)
		}
		out = append(out, abs)
	}
	return out, nil
}
