package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"wtd/daemon"
	"wtd/fleet"
	"wtd/schedule"
)

// daemonFlags are wtd daemon's options.
type daemonFlags struct {
	config    string
	check     bool
	logFormat string
	results   resultsFlags
}

func newDaemonCmd(env Env, dbFlag *string) *cobra.Command {
	var f daemonFlags
	cmd := &cobra.Command{
		Use:   "daemon --config wtd.yaml",
		Short: "Run playbooks on schedules, keep off-peak windows and serve the HTTP API",
		Long: `Daemon fires each schedule of the config file at its cron times: a run carried
out by wtd run in a child process (same lock, handed to it; same record), with
its trigger recorded ("schedule NAME", "api NAME", "catch-up NAME"). A
schedule's timeout and an abort through the API send the child SIGTERM with
the reason, and SIGKILL 10 s later if it is still there: the daemon then puts
back what the run changed and records it aborted. A fire that finds a run going
(its own or another experiment's) is skipped and the skip recorded, never
queued. Windows apply their open settings (setParameter) to an existing
server when they open and their close settings when they close, at start if
the daemon starts inside one, and at SIGTERM unless leave_open.

Signals: SIGHUP reloads the config (a config that does not check is refused,
the old one stays); SIGTERM or SIGINT abort the run going (recorded aborted,
servers shut down; a child that does not answer is killed after 10 s), close
the open windows and exit 0.

--check validates the config (and each schedule's playbook with its params)
and prints the next five fire times of every schedule and window: exit 0 when
it is valid, 2 when not.

With results: in the config (or --results URI), each run the daemon started is
pushed to that central results store once it ended (see "Many hosts" in the
README); a run the store did not take waits in the outbox and is retried with
backoff (wtd runs shows it).

Logs go to stderr: text on a terminal, JSON lines otherwise (--log-format).`,
		Example: `  wtd daemon --config /etc/wtd/wtd.yaml
  wtd daemon --check --config deploy/wtd.example.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.config == "" {
				f.config = env.Getenv("WTD_CONFIG")
			}
			if f.config == "" {
				return usageErr("--config FILE is required (or $WTD_CONFIG)")
			}
			if f.check {
				return checkConfig(cmd.Context(), env, f.config)
			}
			log, err := newLogger(env, f.logFormat)
			if err != nil {
				return err
			}
			results, _, err := f.results.config(env)
			if err != nil {
				return err
			}
			return runDaemon(cmd.Context(), env, log, f.config, *dbFlag, results)
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "", "config file (default $WTD_CONFIG)")
	cmd.Flags().BoolVar(&f.check, "check", false, "check the config, print the next five fire times and exit (0 valid, 2 not)")
	cmd.Flags().StringVar(&f.logFormat, "log-format", "auto", "log format: text, json, or auto (text on a terminal, else json)")
	f.results.add(cmd, "push each run to this central results store when it ends, over the config's results")
	return cmd
}

// newLogger makes the daemon's logger on stderr.
func newLogger(env Env, format string) (*slog.Logger, error) {
	switch format {
	case "auto":
		if env.Terminal {
			format = "text"
		} else {
			format = "json"
		}
	case "text", "json":
	default:
		return nil, usageErr("--log-format %q: want text, json or auto", format)
	}
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if env.Getenv("WTD_DEBUG") != "" {
		opts.Level = slog.LevelDebug
	}
	var h slog.Handler = slog.NewJSONHandler(env.Stderr, opts)
	if format == "text" {
		h = slog.NewTextHandler(env.Stderr, opts)
	}
	return slog.New(h), nil
}

func runDaemon(ctx context.Context, env Env, log *slog.Logger, config, dbFlag string, results fleet.Config) error {
	state, err := stateDir(env.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	defaultDB, err := dbPath("", env.Getenv)
	if err != nil {
		defaultDB = ""
	}
	self, err := os.Executable()
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("find the wtd binary the runs are carried out by: %w", err)}
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	err = daemon.Run(ctx, daemon.Options{ConfigPath: config, DB: dbFlag, DefaultDB: defaultDB, StateDir: state,
		FindServer: func(configured string) (string, error) {
			bin, _, err := findServer(configured, env.Getenv)
			return bin, err
		},
		Executable: self, Log: log, Results: results}, signals)
	var ce *daemon.ConfigError
	if errors.As(err, &ce) {
		return usageErr("%v", ce.Err)
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// checkConfig validates the config and prints every schedule's and
// window's next five fire times.
func checkConfig(ctx context.Context, env Env, path string) error {
	cfg, err := daemon.LoadConfig(ctx, path)
	if err != nil {
		return usageErr("%v", err)
	}
	scheds, wins := schedule.Describe(cfg, time.Now(), 5)
	fmt.Fprintf(env.Stdout, "%s: %d schedules, %d windows, API on %s\n", cfg.Path, len(scheds), len(wins), cfg.Listen)
	for _, s := range scheds {
		fmt.Fprintf(env.Stdout, "\nschedule %s  %q  %s\n", s.Name, s.Cron, s.Playbook)
		printTimes(env.Stdout, s.Next)
	}
	for _, w := range wins {
		fmt.Fprintf(env.Stdout, "\nwindow %s  %q  for %s on %s\n", w.Name, w.Cron, w.Duration, w.Server)
		printTimes(env.Stdout, w.Next)
	}
	return nil
}

func printTimes(w io.Writer, times []time.Time) {
	for _, t := range times {
		fmt.Fprintf(w, "  %s\n", t.Format("2006-01-02 15:04:05 MST"))
	}
}
