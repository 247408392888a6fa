package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/runner"
)

// runFlags are wtd run's options.
type runFlags struct {
	params   []string
	mongod   string
	interval time.Duration
	noWait   bool
	// allowDirs are the --allow-dir directories (absolute once checked).
	allowDirs []string
	// allowServices are the units mongod.service may restart.
	allowServices []string
	// allowCommands lets m:command change servers wtd did not start.
	allowCommands bool
	// maxMemory is --max-memory as given ("": the default).
	maxMemory string
	// child are the hidden flags the daemon starts a run with.
	child childFlags
}

// childFlags are the hidden flags of a run the daemon carries out in a
// child process (daemon/launch.go starts it).
type childFlags struct {
	// trigger is recorded as the run's trigger ("schedule NAME").
	trigger string
	// lockFD is the experiment lock the daemon took and handed over.
	lockFD int
	// runIDFD is where the run's id is written once it is recorded.
	runIDFD int
	// abortFD is where the daemon writes why it stops the run, before it
	// sends SIGTERM.
	abortFD int
}

func newRunCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PLAYBOOK [-p name=value]...",
		Short: "Run a playbook and record it",
		Long: `Run carries out a Lua playbook: it starts the servers the playbook asks for,
runs its steps, samples serverStatus and host metrics every --sample-interval,
and records everything in the results database. Ctrl-C stops the current step,
shuts the servers down and records the run as aborted.

Before anything is recorded the playbook is compiled and its -p parameters are
checked: a usage error leaves no run behind.

One experiment at a time per host: drop_caches and the page cache are
host-wide, so a run holds the experiment lock (a file in the state directory,
$WTD_STATE_DIR, else $XDG_STATE_HOME/wtd or ~/.local/state/wtd) from start to
end. A second run waits for it, naming the holder every 30 s, or with
--no-wait exits 3 at once.

The run's directory is <state directory>/runs/ID: servers' data and logs live
there while it runs; files the playbook writes there (io.open) are kept with
the run in the database at the end (wtd show lists them), then the directory
is removed. Directories left by a wtd that was killed are removed by the next
run.

mongod.service (a mongod a service manager runs from its config file) needs
--allow-service UNIT: what the run changes there is put back at its end (see
the README, "Tuning a mongod you already run").

On a server wtd did not start (mongod.connect, mongod.service), m:command runs
only commands that read (serverStatus, find, aggregate without $out/$merge,
...); the others are refused, naming the method that wtd puts back
(m:set_parameter, m:reconfigure, m:create_index). --allow-commands lets them
run: each is recorded first as a change wtd cannot put back (wtd show lists
it as not restorable).

Which server binary mongod.start runs: --mongod, else $WTD_MONGOD, else mongod
on PATH, else minimongod next to the wtd binary or on PATH.

A run is bounded: it may hold --max-memory (default 2 GiB, or a quarter of the
host's memory when that is less; one string at most a quarter of it), past
which it ends failed; one pattern match (string.find, match, gmatch, gsub) may
take 5 s, past which the run ends failed naming the playbook line. SIGINT or
SIGTERM ends wtd run within 10 s whatever the playbook does.

Exit status: 0 the playbook succeeded, 1 it failed, 2 usage error (bad flag,
unknown or malformed -p, unreadable playbook, Lua syntax error), 3 another
experiment holds the lock (--no-wait), 130 interrupted.`,
		Example: `  wtd run playbooks/cache_sweep.lua
  wtd run playbooks/cache_sweep.lua -p docs=100000 -p reads=2000 -p rounds=1
  wtd run --no-wait playbooks/tickets.lua`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			overrides, err := parseOverrides(f.params)
			if err != nil {
				return err
			}
			if f.interval < 0 {
				return usageErr("--sample-interval %s: must be 0 (off) or positive", f.interval)
			}
			if f.allowDirs, err = checkAllowDirs(f.allowDirs); err != nil {
				return err
			}
			if f.maxMemory != "" {
				if _, err := engine.ParseBytes(f.maxMemory); err != nil {
					return usageErr("--max-memory: %v", err)
				}
			}
			return runPlaybook(cmd.Context(), env, openStore, args[0], overrides, f)
		},
	}
	cmd.Flags().StringArrayVarP(&f.params, "param", "p", nil, "set a playbook parameter (name=value), repeatable")
	cmd.Flags().StringVar(&f.mongod, "mongod", "", "server binary to start (default $WTD_MONGOD, mongod or minimongod)")
	cmd.Flags().DurationVar(&f.interval, "sample-interval", time.Second, "how often to record serverStatus and host metrics (0 turns sampling off)")
	cmd.Flags().BoolVar(&f.noWait, "no-wait", false, "exit 3 at once when another experiment holds the host's lock, instead of waiting")
	addAllowDirFlag(cmd, &f.allowDirs)
	cmd.Flags().StringArrayVar(&f.allowServices, "allow-service", nil, "a service unit mongod.service may restart through its service manager (its config is put back at the end), repeatable")
	cmd.Flags().BoolVar(&f.allowCommands, "allow-commands", false, "let m:command run commands that change a server wtd did not start (each recorded as a change that cannot be put back)")
	cmd.Flags().StringVar(&f.maxMemory, "max-memory", "", "the most memory the run may hold, e.g. 512MiB (default 2GiB, or a quarter of the host's memory when less)")
	cmd.Flags().StringVar(&f.child.trigger, "trigger", "cli", "what the run records as its trigger")
	cmd.Flags().IntVar(&f.child.lockFD, "lock-fd", -1, "file descriptor of the experiment lock, handed over by the daemon")
	cmd.Flags().IntVar(&f.child.runIDFD, "run-id-fd", -1, "file descriptor to write the run's id to once it is recorded")
	cmd.Flags().IntVar(&f.child.abortFD, "abort-fd", -1, "file descriptor to read why the run is stopped from, at SIGTERM")
	for _, name := range []string{"trigger", "lock-fd", "run-id-fd", "abort-fd"} {
		cmd.Flags().MarkHidden(name)
	}
	return cmd
}

func parseOverrides(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range list {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, usageErr("-p %q: want name=value", p)
		}
		if _, dup := out[name]; dup {
			return nil, usageErr("-p %s given twice", name)
		}
		out[name] = value
	}
	return out, nil
}

// findServer picks the server binary: flag, $WTD_MONGOD, mongod on PATH,
// minimongod beside wtd or on PATH.
func findServer(flag string, getenv func(string) string) (path, how string, err error) {
	check := func(p, how string) (string, string, error) {
		abs, err := exec.LookPath(p)
		if err != nil {
			return "", "", usageErr("server binary %s (%s): %v", p, how, err)
		}
		abs, _ = filepath.Abs(abs)
		return abs, how, nil
	}
	if flag != "" {
		return check(flag, "--mongod")
	}
	if p := getenv("WTD_MONGOD"); p != "" {
		return check(p, "$WTD_MONGOD")
	}
	if p, err := exec.LookPath("mongod"); err == nil {
		abs, _ := filepath.Abs(p)
		return abs, "mongod on PATH", nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "minimongod")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, "minimongod next to wtd", nil
		}
	}
	if p, err := exec.LookPath("minimongod"); err == nil {
		abs, _ := filepath.Abs(p)
		return abs, "minimongod on PATH", nil
	}
	return "", "", nil
}

func runPlaybook(ctx context.Context, env Env, openStore func(context.Context) (*store.Store, error), path string,
	overrides map[string]string, f runFlags) error {
	pb, err := runner.ReadPlaybook(ctx, path, overrides)
	if err != nil {
		return usageErr("%v", err)
	}
	bin, how, err := findServer(f.mongod, env.Getenv)
	if err != nil {
		return err
	}
	switch {
	case !mayStartServers(pb.Source):
		// Only mongod.connect or mongod.service: no binary is run.
	case bin != "":
		fmt.Fprintf(env.Stderr, "wtd: mongod.start runs %s (%s)\n", bin, how)
	default:
		fmt.Fprintln(env.Stderr, "wtd: no server binary found (no --mongod, $WTD_MONGOD, mongod or minimongod); mongod.start will fail, mongod.connect works")
	}
	state, err := stateDir(env.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close(context.WithoutCancel(ctx))
	lock, err := runLock(ctx, env, state, hostctl.LockHolder{Playbook: path, Trigger: f.child.trigger, DB: st.Path()}, f)
	if err != nil {
		return err
	}
	defer lock.Release()
	defer exitAfterSignal(ctx, env, hardStop)()

	limits := runner.Limits{MaxMemory: maxMemory(f.maxMemory, env.host())}
	runCtx, stopRun := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopRun(nil)
	defer context.AfterFunc(ctx, func() { stopRun(stopCause(ctx, f.child.abortFD)) })()
	progress := newProgress(env)
	defer progress.close()
	hooks := runner.Hooks{Out: progress.outWriter(), Progress: progress.update, Finishing: progress.close}
	if f.child.runIDFD >= 0 {
		hooks.Progress = nil // the daemon logs the run's events, not progress lines
	}
	r, err := runner.Start(runCtx, pb, lock, engine.Config{Store: st, Host: env.host(), MongodBinary: bin,
		WtdVersion: versionString(), Trigger: f.child.trigger, SampleInterval: f.interval, StateDir: state, AllowDirs: f.allowDirs,
		AllowServices: f.allowServices, AllowCommands: f.allowCommands,
		Log: progress.logWriter(), Errors: env.Stderr}, hooks, limits)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	if f.child.runIDFD >= 0 {
		tellRunID(f.child.runIDFD, r.ID)
	}
	fmt.Fprintf(env.Stderr, "wtd: run %d of %s, results in %s (memory limit %s)\n", r.ID, path, st.Path(), engine.FormatBytes(limits.MaxMemory))
	res := r.Play()
	switch {
	case res.Status == record.StatusOK:
		fmt.Fprintf(env.Stderr, "wtd: run %d ok (wtd show %d)\n", r.ID, r.ID)
		return nil
	case res.Status == record.StatusAborted && ctx.Err() != nil:
		return &exitError{code: exitInterrupted, err: fmt.Errorf("run %d aborted: %s", r.ID, res.Reason)}
	case runner.IsParamError(res.Err):
		return &exitError{code: exitUsage, err: fmt.Errorf("run %d failed: %w", r.ID, res.Err)}
	default:
		return &exitError{code: exitFailed, err: fmt.Errorf("run %d failed: %w", r.ID, res.Err)}
	}
}

// takeLock takes the host's experiment lock, waiting (and saying who holds
// it every 30 s) unless noWait.
func takeLock(ctx context.Context, env Env, state string, holder hostctl.LockHolder, noWait bool) (*hostctl.ExperimentLock, error) {
	path := hostctl.LockPath(state)
	if noWait {
		l, err := hostctl.TryLock(path, holder)
		var le *hostctl.LockedError
		if errors.As(err, &le) {
			return nil, &exitError{code: exitBusy, err: fmt.Errorf("%v; not waiting (--no-wait)", le)}
		}
		if err != nil {
			return nil, &exitError{code: exitFailed, err: err}
		}
		return l, nil
	}
	l, err := hostctl.Lock(ctx, path, holder, 30*time.Second, func(h hostctl.LockHolder) {
		fmt.Fprintf(env.Stderr, "wtd: waiting for the experiment lock %s: held by %s\n", path, h)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, &exitError{code: exitInterrupted, err: err}
		}
		return nil, &exitError{code: exitFailed, err: err}
	}
	return l, nil
}

// startsServer matches a playbook text that may call mongod.start: by
// name, or through an index of the mongod table that the text does not
// spell out.
var startsServer = regexp.MustCompile(`\bmongod\s*(\.\s*start\b|\[)|\b_G\b|\b_ENV\b|\bgetfenv\b|\bload(string)?\s*\(`)

// mayStartServers says whether the playbook text may start a server, so
// that wtd names the binary mongod.start runs only when it may run one.
func mayStartServers(src string) bool { return startsServer.MatchString(src) }
