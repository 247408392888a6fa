package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/luabind"
)

func newRunCmd(env Env, openStore func(context.Context) (*store.Store, error)) *cobra.Command {
	var params []string
	var mongodFlag string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "run PLAYBOOK [-p name=value]...",
		Short: "Run a playbook and record it",
		Long: `Run carries out a Lua playbook: it starts the servers the playbook asks for,
runs its steps, samples serverStatus and host metrics every --sample-interval,
and records everything in the results database. Ctrl-C stops the current step,
shuts the servers down and records the run as aborted.

Which server binary mongod.start runs: --mongod, else $WTD_MONGOD, else mongod
on PATH, else minimongod next to the wtd binary or on PATH.

Exit status: 0 the playbook succeeded, 1 it failed, 2 usage error, 130 interrupted.`,
		Example: `  wtd run playbooks/cache_sweep.lua
  wtd run playbooks/cache_sweep.lua -p docs=100000 -p reads=2000 -p rounds=1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			overrides, err := parseOverrides(params)
			if err != nil {
				return err
			}
			if interval < 0 {
				return usageErr("--sample-interval %s: must be 0 (off) or positive", interval)
			}
			return runPlaybook(cmd.Context(), env, openStore, args[0], overrides, mongodFlag, interval)
		},
	}
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "set a playbook parameter (name=value), repeatable")
	cmd.Flags().StringVar(&mongodFlag, "mongod", "", "server binary to start (default $WTD_MONGOD, mongod or minimongod)")
	cmd.Flags().DurationVar(&interval, "sample-interval", time.Second, "how often to record serverStatus and host metrics (0 turns sampling off)")
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
	overrides map[string]string, mongodFlag string, interval time.Duration) (retErr error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return usageErr("read playbook: %v", err)
	}
	bin, how, err := findServer(mongodFlag, env.Getenv)
	if err != nil {
		return err
	}
	version := ""
	if bin != "" {
		vctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		version, err = hostctl.BinaryVersion(vctx, bin)
		cancel()
		if err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("server binary %s: %w", bin, err)}
		}
		fmt.Fprintf(env.Stderr, "wtd: server %s (%s), version %s\n", bin, how, version)
	} else {
		fmt.Fprintln(env.Stderr, "wtd: no server binary found (no --mongod, $WTD_MONGOD, mongod or minimongod); mongod.start will fail, mongod.connect works")
	}
	st, err := openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close(context.WithoutCancel(ctx))

	progress := newProgress(env)
	defer progress.close()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r, err := engine.StartRun(runCtx, engine.Config{Store: st, Host: hostctl.NewHost(), MongodBinary: bin, MongodVersion: version,
		WtdVersion: Version, SampleInterval: interval, Log: progress.logWriter()},
		engine.RunInfo{PlaybookPath: path, Playbook: string(src), Params: stringParams(overrides)})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	fmt.Fprintf(env.Stderr, "wtd: run %d of %s, results in %s\n", r.ID, path, st.Path())

	// However the run ends, its servers are stopped and its end recorded.
	finish := func(status, reason string) {
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer fcancel()
		progress.close()
		if err := r.Finish(fctx, status, reason); err != nil {
			fmt.Fprintf(env.Stderr, "wtd: finishing run %d: %v\n", r.ID, err)
		}
		hostctl.StopAll(fctx)
	}
	defer func() {
		if p := recover(); p != nil {
			finish(engine.StatusFailed, fmt.Sprintf("panic: %v", p))
			fmt.Fprintf(env.Stderr, "%s\n", debug.Stack())
			retErr = &exitError{code: exitFailed, err: fmt.Errorf("run %d failed: panic: %v", r.ID, p)}
		}
	}()
	// Progress names the running step, then the task (e.g. "workload bench.c").
	update := func(task string, done, total int64) {
		if step := r.CurrentStep(); step != "" {
			task = step + ": " + task
		}
		progress.update(task, done, total)
	}
	_, perr := luabind.RunPlaybook(runCtx, path, string(src), luabind.Env{Run: r, Overrides: overrides, Out: progress.outWriter(), Progress: update})
	switch {
	case perr == nil:
		finish(engine.StatusOK, "")
		fmt.Fprintf(env.Stderr, "wtd: run %d ok (wtd show %d)\n", r.ID, r.ID)
		return nil
	case ctx.Err() != nil:
		finish(engine.StatusAborted, "interrupted: "+context.Cause(ctx).Error())
		return &exitError{code: exitInterrupted, err: fmt.Errorf("run %d aborted: interrupted", r.ID)}
	default:
		finish(engine.StatusFailed, perr.Error())
		var pe *luabind.ParamError
		if errors.As(perr, &pe) {
			return &exitError{code: exitUsage, err: fmt.Errorf("run %d failed: %w", r.ID, perr)}
		}
		return &exitError{code: exitFailed, err: fmt.Errorf("run %d failed: %w", r.ID, perr)}
	}
}

func stringParams(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
