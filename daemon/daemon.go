// Package daemon is `wtd daemon`: it loads the config (schedules, windows,
// playbooks checked), opens the results database, runs the scheduler with
// each run carried out by `wtd run` in a child process (so that a stuck or
// exhausted run can always be ended), serves the HTTP API and reloads or
// stops on signals.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"wtd/engine"
	"wtd/engine/store"
	"wtd/fleet"
	"wtd/hostctl"
	"wtd/schedule"
	"wtd/web"
)

// Options are what the daemon takes from its command line and
// environment.
type Options struct {
	ConfigPath string
	// DB is the results database given on the command line (--db): it
	// wins over the config's db; DefaultDB is used when neither names one.
	DB, DefaultDB string
	// StateDir holds the experiment lock and the run directories.
	StateDir string
	// FindServer resolves the binary mongod.start runs from the config's
	// mongod ("" when it names none), as wtd run does from --mongod.
	FindServer func(configured string) (string, error)
	// Executable is the wtd binary each run is carried out by, as
	// `wtd run` in a child process.
	Executable string
	Log        *slog.Logger
	// OnRunEnd hooks see each run the daemon started when it ends, after
	// the daemon's own (metrics, and the regression verdict recorded with
	// the end under record.VerdictAttr).
	OnRunEnd []schedule.RunEndHook
	// Results is the central results store given on the command line
	// (--results): it wins over the config's results.
	Results fleet.Config
}

// ConfigError is a config that does not load or check.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the error behind it.
func (e *ConfigError) Unwrap() error { return e.Err }

// httpShutdown bounds the API's shutdown after the scheduler stopped.
const httpShutdown = 2 * time.Second

// Run is the daemon: it returns nil once SIGTERM or SIGINT (on signals)
// or the end of ctx has stopped it cleanly, a *ConfigError when the config
// does not check at start.
func Run(ctx context.Context, opts Options, signals <-chan os.Signal) error {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	cfg, err := LoadConfig(ctx, opts.ConfigPath)
	if err != nil {
		return &ConfigError{Err: err}
	}
	dbPath := opts.DB
	if dbPath == "" {
		dbPath = cfg.DB
	}
	if dbPath == "" {
		dbPath = opts.DefaultDB
	}
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		return fmt.Errorf("open results database %s: %w", dbPath, err)
	}
	defer st.Close(context.WithoutCancel(ctx))
	// Runs whose wtd was killed are recorded aborted, and what they changed
	// on a server is put back, before anything else runs.
	if opts.StateDir != "" {
		st.SetHostLock(hostctl.LockPath(opts.StateDir))
	}
	if err := engine.RestoreUnrestored(ctx, st, "wtd daemon", &lineLog{log: opts.Log, level: slog.LevelWarn, msg: "restore"}); err != nil {
		opts.Log.Error("putting back what earlier runs changed on servers", "err", err)
	}
	d := &daemon{opts: opts, st: st}
	results := cfg.Results
	if opts.Results.URI != "" {
		results = opts.Results
	}
	if results.URI != "" {
		stop := d.startPusher(ctx, results)
		defer stop()
	}
	reg, hooks := d.metrics()
	d.sched = schedule.New(cfg, schedule.Options{Store: st, StateDir: opts.StateDir, Launch: d.launch, Log: opts.Log,
		OnRunEnd: append(append(hooks, d.verdict), opts.OnRunEnd...), Recorded: d.queuePush})
	api := web.New(web.Options{Store: st, Scheduler: d.sched, Log: opts.Log, Registry: reg, Results: results})
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	nofile := openFileLimit()
	conns := apiConnCap(cfg.APIMaxConnections, nofile)
	srv, guarded := web.NewHTTPServer(api, ln, conns)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(guarded) }()
	opts.Log.Info("API listening", "addr", ln.Addr().String(), "db", dbPath, "token", cfg.Token != "",
		"max_connections", conns, "open_file_limit", nofile)
	err = d.sched.Serve(ctx, signals, func() (schedule.Config, error) { return d.reload(ctx, cfg) })
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpShutdown)
	defer cancel()
	srv.Shutdown(sctx)
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve API: %w", serr))
	}
	return err
}

// daemon is a running daemon's parts.
type daemon struct {
	opts  Options
	st    *store.Store
	sched *schedule.Scheduler
	// pushWake wakes the pusher when a run was queued; nil without a
	// results store.
	pushWake chan struct{}
}

// reload reads the config again for SIGHUP; settings that only a restart
// changes are named in the log.
func (d *daemon) reload(ctx context.Context, first schedule.Config) (schedule.Config, error) {
	cfg, err := LoadConfig(ctx, d.opts.ConfigPath)
	if err != nil {
		return cfg, err
	}
	if cfg.Listen != first.Listen || cfg.DB != first.DB || cfg.APIMaxConnections != first.APIMaxConnections {
		d.opts.Log.Warn("listen, db and api_max_connections change only when the daemon restarts", "listen", first.Listen,
			"db", first.DB, "api_max_connections", first.APIMaxConnections)
	}
	if cfg.Results != first.Results {
		d.opts.Log.Warn("results changes only when the daemon restarts", "results", first.Results.Dest())
	}
	return cfg, nil
}

// LoadConfig reads and checks the config at path, and checks every
// schedule's playbook with its params as wtd run would: a config that
// loads here runs.
func LoadConfig(ctx context.Context, path string) (schedule.Config, error) {
	cfg, err := schedule.LoadConfig(path)
	if err != nil {
		return cfg, err
	}
	for _, s := range cfg.Schedules {
		if _, err := readPlaybook(ctx, s); err != nil {
			return cfg, fmt.Errorf("%s:%d: schedule %s: %w", cfg.Path, s.Line, s.Name, err)
		}
	}
	return cfg, nil
}
