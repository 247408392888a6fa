package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"wtd/engine/store"
)

// Version is wtd's version, set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// Env is everything the process gives the CLI, injected so whole runs can
// be tested.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Terminal is true when stdout is a terminal (live progress).
	Terminal bool
}

// exitError carries an exit status with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// run executes the command line and returns the exit status.
func run(ctx context.Context, args []string, env Env) int {
	root := newRoot(ctx, env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(env.Stderr, "wtd: %v\n", ee.err)
		}
		return ee.code
	}
	// cobra's own errors: unknown command or flag, bad arguments.
	fmt.Fprintf(env.Stderr, "wtd: %v\nRun 'wtd --help' for usage.\n", err)
	return exitUsage
}

func newRoot(ctx context.Context, env Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "wtd",
		Short: "Run MongoDB / WiredTiger tuning experiments from Lua playbooks",
		Long: `wtd carries out WiredTiger tuning experiments end to end: it starts mongod with the
settings a playbook asks for, drops the OS page cache, runs workloads, samples
serverStatus and host metrics, and records everything in SQLite.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var dbFlag string
	root.PersistentFlags().StringVar(&dbFlag, "db", "", "results database (default $WTD_DB, else $XDG_DATA_HOME/wtd/wtd.db or ~/.local/share/wtd/wtd.db)")
	openStore := func(ctx context.Context) (*store.Store, error) {
		path, err := dbPath(dbFlag, env.Getenv)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		st, err := store.Open(ctx, path)
		if err != nil {
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("open results database %s: %w", path, err)}
		}
		return st, nil
	}
	root.AddCommand(newRunCmd(env, openStore), newRunsCmd(env, openStore), newShowCmd(env, openStore), newSamplesCmd(env, openStore), newVersionCmd(env))
	return root
}

// dbPath resolves the results database: --db, $WTD_DB, $XDG_DATA_HOME/wtd,
// ~/.local/share/wtd.
func dbPath(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if p := getenv("WTD_DB"); p != "" {
		return p, nil
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "wtd", "wtd.db"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("no results database: set --db, $WTD_DB or $HOME")
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "wtd", "wtd.db"), nil
}

func newVersionCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print wtd's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(env.Stdout, "wtd %s\n", Version)
			return nil
		},
	}
}
