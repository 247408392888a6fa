package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// Config is what a run needs from its caller.
type Config struct {
	Store *store.Store
	Host  *hostctl.Host
	// MongodBinary is the server binary mongod.start runs. What a run
	// records as its target is what it started or attached to (buildInfo),
	// not this.
	MongodBinary string
	WtdVersion   string
	// Trigger says what started the run: "cli" (default), "api",
	// "schedule NAME", "catch-up".
	Trigger string
	// SampleInterval is the sampler's period; 0 turns the sampler off.
	SampleInterval time.Duration
	StartOptions   hostctl.StartOptions
	// StateDir is wtd's state directory: the run's directory is
	// StateDir/runs/ID, marked with its owner, and directories left there by
	// dead processes are removed when a run starts.
	StateDir string
	// LockPath is the experiment lock file the caller holds for the run
	// until it has recorded the run's end ("" none). It is recorded with
	// the run: a run whose lock nobody holds is not going on.
	LockPath string
	// Dir, if set, is the run's directory instead (kept; only the servers'
	// data in it is deleted at the end). With neither, a temp directory.
	Dir string
	// AllowDirs are the directories besides the run's where mongod.start
	// may put a dbpath (wtd run --allow-dir).
	AllowDirs []string
	// AllowServices are the units mongod.service may restart (wtd run
	// --allow-service, the daemon config's services:).
	AllowServices []string
	// AllowCommands lets m:command run commands that change a server wtd
	// did not start (wtd run --allow-commands, the daemon config's
	// allow_commands); each is recorded first as a change that cannot be
	// put back. Without it only the commands that read run there.
	AllowCommands bool
	// Log receives the run's events as lines (may be nil).
	Log io.Writer
	// Errors receives failures that cannot wait for the end of the run,
	// such as a results database that stopped taking writes (may be nil).
	Errors io.Writer
}

// RunInfo describes the playbook a run carries out.
type RunInfo struct {
	PlaybookPath string
	Playbook     string
	Params       map[string]any
}

// Run is one execution of a playbook: its servers, steps, sampler and
// record in the store.
type Run struct {
	ID     int64
	cfg    Config
	info   RunInfo
	dir    string
	ownDir bool // the run made dir and removes it at the end

	ctx    context.Context
	cancel context.CancelCauseFunc
	// loads remembers the run's loads, for the workloads' defaults and
	// the steps' provenance.
	loads workload.Loads

	logMu    sync.Mutex // serialises printLine
	mu       sync.Mutex
	servers  []*Server
	steps    []record.StepRecord
	lastDrop *DropRecord
	sampler  *sampler
	start    time.Time
	finished bool
	virt     string
	current  string // title of the running step
	// partial is the result of the last load or workload that failed in
	// the running step, recorded as the step's result when the step's
	// function fails without one.
	partial any
	// restartsAt holds each server's restart count at the end of the last
	// step, to tell whether a step follows a restart.
	restartsAt map[*Server]int
	// storeErr is the first write the results database refused.
	storeErr error
	// thresholds are those the playbook declared (threshold{}).
	thresholds thresholds
}

// ErrResultsDatabase wraps a failure of the results database that stopped
// a run.
var ErrResultsDatabase = errors.New("results database")

// DropRecord is the last drop_caches attempt of a run.
type DropRecord struct {
	hostctl.DropResult
	At time.Time `json:"at"`
}

// StartRun checks the results database, records a new run, makes its
// directory and starts its sampler. The run's context (Context) is ctx's
// child: Abort, or a results database that stops taking writes, cancels it.
func StartRun(ctx context.Context, cfg Config, info RunInfo) (*Run, error) {
	if cfg.Store == nil {
		return nil, errors.New("start run: no store")
	}
	if cfg.Host == nil {
		cfg.Host = hostctl.NewHost()
	}
	if err := cfg.Store.QuickCheck(ctx); err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	r := &Run{cfg: cfg, info: info, start: time.Now(), restartsAt: map[*Server]int{}}
	if cfg.StateDir != "" {
		if removed, err := RemoveStaleRunDirs(cfg.StateDir); err != nil {
			r.warnf("%v", err)
		} else if len(removed) > 0 {
			r.warnf("removed %d run directories left by wtd processes that ended: %s", len(removed), strings.Join(removed, ", "))
		}
	}
	// The disk the run's directory will be on (a temp directory without
	// either).
	factsDir := cfg.Dir
	if factsDir == "" {
		factsDir = cfg.StateDir
	}
	if factsDir == "" {
		factsDir = os.TempDir()
	}
	facts, _ := cfg.Host.Facts(ctx, factsDir)
	r.virt = facts.Virtualization.System
	id, err := cfg.Store.CreateRun(ctx, store.RunInfo{
		PlaybookPath: info.PlaybookPath, Playbook: info.Playbook, Params: info.Params, StartedAt: r.start,
		Host: hostFacts(facts), WtdVersion: cfg.WtdVersion, Trigger: cfg.Trigger, LockPath: cfg.LockPath,
	})
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	r.ID = id
	if err := r.makeDir(); err != nil {
		cfg.Store.FinishRun(context.WithoutCancel(ctx), id, record.StatusFailed, err.Error(), time.Now())
		return nil, fmt.Errorf("start run: %w", err)
	}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	cfg.Store.OnFailure(r.storeFailed)
	r.sampler = newSampler(r, cfg.SampleInterval)
	r.sampler.start()
	return r, nil
}

// makeDir creates the run's directory (see Config.StateDir and Dir).
func (r *Run) makeDir() error {
	var err error
	switch {
	case r.cfg.Dir != "":
		r.dir = r.cfg.Dir
		err = os.MkdirAll(r.dir, runDirPermissions)
	case r.cfg.StateDir != "":
		r.dir, err = makeRunDir(r.cfg.StateDir, r.ID, r.cfg.Store.Path())
		r.ownDir = true
	default:
		r.dir, err = os.MkdirTemp("", "wtd-run-")
		r.ownDir = true
	}
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(r.dir)
	if err != nil {
		return err
	}
	r.dir = abs
	return nil
}

// warnf prints a warning that belongs to no run yet.
func (r *Run) warnf(format string, args ...any) {
	r.printLine(r.cfg.Log, time.Now(), "warn", "run", fmt.Sprintf(format, args...))
}

// printLine writes one line of the run's log to w (nil: nowhere). The
// run's events come from several goroutines (steps, samplers, the results
// database's writer), so lines are written one at a time: the writers
// given in Config need not be safe for concurrent use.
func (r *Run) printLine(w io.Writer, at time.Time, level, source, msg string) {
	if w == nil {
		return
	}
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(w, "%s %-5s %-6s %s\n", at.Format("15:04:05"), level, source, msg)
}

// storeFailed stops the run when the results database refuses a write:
// what it measures from then on could not be recorded.
func (r *Run) storeFailed(err error) {
	r.mu.Lock()
	first := r.storeErr == nil
	if first {
		r.storeErr = fmt.Errorf("%w: %w", ErrResultsDatabase, err)
	}
	werr := r.storeErr
	r.mu.Unlock()
	if !first {
		return
	}
	msg := fmt.Sprintf("%v: stopping the run", werr)
	for _, w := range []io.Writer{r.cfg.Errors, r.cfg.Log} {
		r.printLine(w, time.Now(), "error", "run", msg)
	}
	r.cfg.Store.AddEvent(r.ID, time.Now(), "error", "run", msg, nil)
	r.cancel(werr)
}

// StoreErr returns the results database failure that stopped the run, or
// nil.
func (r *Run) StoreErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.storeErr
}

// Context is the run's context: cancelled by Abort, by a results database
// failure, or with its parent.
func (r *Run) Context() context.Context { return r.ctx }

// Abort cancels the run's context with cause; the first cause wins.
func (r *Run) Abort(cause error) { r.cancel(cause) }

func hostFacts(f hostctl.Facts) store.HostFacts {
	return store.HostFacts{Cores: f.LogicalCores, MemoryBytes: int64(f.MemTotalBytes), Kernel: f.KernelRelease,
		Virtualisation: f.Virtualization.System, Disk: f.Disk.Device + " " + f.Disk.Fstype}
}

// Dir returns the run's working directory.
func (r *Run) Dir() string { return r.dir }

// PlaybookHash returns the sha256 of the playbook text.
func PlaybookHash(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

func (r *Run) addServer(s *Server) {
	r.mu.Lock()
	r.servers = append(r.servers, s)
	r.mu.Unlock()
}

// Servers returns the run's servers.
func (r *Run) Servers() []*Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Server(nil), r.servers...)
}

// Eventf records an event of the run and prints it to the run's log.
func (r *Run) Eventf(level, source, format string, args ...any) {
	msg := redact(fmt.Sprintf(format, args...))
	now := time.Now()
	r.cfg.Store.AddEvent(r.ID, now, level, source, msg, nil)
	r.printLine(r.cfg.Log, now, level, source, msg)
}

// DropCaches drops the OS page cache (host-wide, needs root) and records
// the attempt; Dropped is false, with the reason, when it did not happen.
func (r *Run) DropCaches(ctx context.Context) hostctl.DropResult {
	res := r.cfg.Host.DropCaches(ctx)
	r.mu.Lock()
	r.lastDrop = &DropRecord{DropResult: res, At: time.Now()}
	r.mu.Unlock()
	if res.Dropped {
		r.Eventf("info", "host", "dropped the page cache: Cached %s -> %s", mb(res.CachedBefore), mb(res.CachedAfter))
	} else {
		r.Eventf("warn", "host", "could not drop the page cache: %s", res.Reason)
	}
	return res
}

// mb words an optional byte count.
func mb(b *uint64) string {
	if b == nil {
		return "unknown (meminfo not read)"
	}
	return fmt.Sprintf("%.1f MB", float64(*b)/(1<<20))
}

// Finish stops every server the run started, stops the sampler (keeping
// what it recorded), keeps the files the playbook wrote, removes the
// servers' data and records the run's end. A run stopped by its results
// database ends failed with that reason, whatever status is given. It is
// safe to call twice.
func (r *Run) Finish(ctx context.Context, status, reason string) error {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return nil
	}
	r.finished = true
	servers := append([]*Server(nil), r.servers...)
	storeErr := r.storeErr
	r.mu.Unlock()
	defer r.cancel(errors.New("run finished"))
	if storeErr != nil {
		status, reason = record.StatusFailed, storeErr.Error()
	}
	r.sampler.stop()
	var errs []error
	if err := r.RestoreChanges(ctx); err != nil {
		errs = append(errs, fmt.Errorf("put back what the run changed: %w", err))
	}
	for _, s := range servers {
		if err := s.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", s.Name, err))
		}
	}
	if err := r.cleanDir(ctx, servers); err != nil {
		errs = append(errs, err)
	}
	if reason != "" {
		r.Eventf(levelFor(status), "run", "run %s: %s", status, reason)
	} else {
		r.Eventf("info", "run", "run %s", status)
	}
	if err := r.cfg.Store.FinishRun(ctx, r.ID, status, redact(reason), time.Now()); err != nil {
		errs = append(errs, fmt.Errorf("record the end of run %d (%s: %s): %w", r.ID, status, reason, err))
	}
	if err := r.cfg.Store.Flush(ctx); err != nil && storeErr == nil {
		errs = append(errs, err)
	}
	r.cfg.Store.OnFailure(nil)
	return errors.Join(errs...)
}

func levelFor(status string) string {
	if status == record.StatusOK {
		return "info"
	}
	return "error"
}

func redact(s string) string { return store.RedactURI(s) }

func (r *Run) hostVirt(context.Context) string { return r.virt }

func (r *Run) lastNS() string { return r.loads.Last() }

// notePartial keeps the result of a failed load or workload for the step
// it runs in.
func (r *Run) notePartial(res any) {
	r.mu.Lock()
	r.partial = res
	r.mu.Unlock()
}

// takePartial returns and forgets the result notePartial kept.
func (r *Run) takePartial() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.partial
	r.partial = nil
	return res
}

// SetParams records the playbook's final parameters (known once the
// playbook has declared them).
func (r *Run) SetParams(ctx context.Context, params map[string]any) error {
	r.mu.Lock()
	r.info.Params = params
	r.mu.Unlock()
	return r.cfg.Store.SetRunParams(ctx, r.ID, params)
}

// Params returns the parameters recorded with the run.
func (r *Run) Params() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info.Params
}
