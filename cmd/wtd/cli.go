package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/hostctl"
)

// Version is wtd's version, set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitBusy        = 3 // another experiment holds the lock (--no-wait)
	exitInterrupted = 130
)

// Env is everything the process gives the CLI, injected so whole runs can
// be tested.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Terminal is true when stdout is a terminal with a width (live
	// progress bars; else plain progress lines).
	Terminal bool
	// Host is the machine runs act on; nil means hostctl.NewHost().
	Host *hostctl.Host
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

// run executes the command line and returns the exit status. Everything
// written to stderr (messages, errors quoting the playbook, the daemon's
// log) is shown with its control characters escaped (termWriter).
func run(ctx context.Context, args []string, env Env) int {
	env.Stderr = termWriter{env.Stderr}
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
	stores := storeOpener{env: env, flag: &dbFlag, command: new(string)}
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { *stores.command = cmd.CommandPath() }
	root.AddCommand(newRunCmd(env, stores.create), newRunsCmd(env, stores.existing), newShowCmd(env, stores.existing),
		newSamplesCmd(env, stores.existing), newArtifactsCmd(env, stores.existing), newVersionCmd(env),
		newRmCmd(env, stores.existing), newPruneCmd(env, stores.existing), newCompareCmd(env, stores.existing),
		newHistoryCmd(env, stores.existing), newReportCmd(env, stores.existing), newRestoreCmd(env, stores), newKnobsCmd(env), newParamsCmd(env), newCheckCmd(env),
		newImportCmd(env, stores.create), newPushCmd(env, stores.existing))
	root.AddCommand(newDaemonCmd(env, &dbFlag), newSchedulesCmd(env))
	return root
}

// storeOpener opens the results database the flags and environment name.
type storeOpener struct {
	env     Env
	flag    *string
	command *string // the command line's command ("wtd runs"), set when it starts
}

// create opens the database, creating it (0600, its directory 0700) when
// it does not exist: for commands that record.
func (o storeOpener) create(ctx context.Context) (*store.Store, error) {
	path, err := dbPath(*o.flag, o.env.Getenv)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("open results database %s: %w", path, err)}
	}
	o.restore(ctx, st)
	return st, nil
}

// restore records aborted the runs whose wtd was killed and puts back
// what they changed on servers (engine.RestoreUnrestored), but for the
// runs skip: every command that opens the database does. A failure is
// reported and the command goes on; wtd restore RUN retries.
func (o storeOpener) restore(ctx context.Context, st *store.Store, skip ...int64) {
	if state, err := stateDir(o.env.Getenv); err == nil {
		st.SetHostLock(hostctl.LockPath(state))
	}
	by := *o.command
	if by == "" {
		by = "wtd"
	}
	if err := engine.RestoreUnrestored(ctx, st, by, o.env.Stderr, skip...); err != nil {
		fmt.Fprintf(o.env.Stderr, "wtd: putting back what an earlier run changed: %v (wtd restore RUN tries again)\n", err)
	}
}

// existing opens the database only if it exists: read-only commands never
// create one (a mistyped --db would otherwise say "no runs").
func (o storeOpener) existing(ctx context.Context) (*store.Store, error) {
	st, err := o.existingAsIs(ctx)
	if err == nil {
		o.restore(ctx, st)
	}
	return st, err
}

// existingAsIs is existing without restoring anything: for wtd restore,
// which restores its run and then the others.
func (o storeOpener) existingAsIs(ctx context.Context) (*store.Store, error) {
	path, err := dbPath(*o.flag, o.env.Getenv)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	st, err := store.OpenExisting(ctx, path)
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, usageErr("no results database at %s: nothing was recorded there (wtd run creates it; --db or $WTD_DB name another)", path)
	}
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("open results database %s: %w", path, err)}
	}
	return st, nil
}

// stateDir is where wtd keeps run directories and the experiment lock:
// $WTD_STATE_DIR, else $XDG_STATE_HOME/wtd, else ~/.local/state/wtd.
func stateDir(getenv func(string) string) (string, error) {
	if p := getenv("WTD_STATE_DIR"); p != "" {
		return filepath.Abs(p)
	}
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "wtd"), nil
	}
	home, err := homeDir(getenv)
	if err != nil {
		return "", errors.New("no state directory: set $WTD_STATE_DIR, $XDG_STATE_HOME or $HOME")
	}
	return filepath.Join(home, ".local", "state", "wtd"), nil
}

func homeDir(getenv func(string) string) (string, error) {
	if home := getenv("HOME"); home != "" {
		return home, nil
	}
	return os.UserHomeDir()
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
	home, err := homeDir(getenv)
	if err != nil {
		return "", errors.New("no results database: set --db, $WTD_DB or $HOME")
	}
	return filepath.Join(home, ".local", "share", "wtd", "wtd.db"), nil
}

func newVersionCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print wtd's version, commit and commit time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(env.Stdout, "wtd %s\n", versionString())
			return nil
		},
	}
}

func (e Env) host() *hostctl.Host {
	if e.Host != nil {
		return e.Host
	}
	return hostctl.NewHost()
}
