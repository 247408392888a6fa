package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"wtd/engine/store"
	"wtd/hostctl"
)

// Run statuses.
const (
	StatusRunning = "running"
	StatusOK      = "ok"
	StatusFailed  = "failed"
	StatusAborted = "aborted"
)

// Config is what a run needs from its caller.
type Config struct {
	Store *store.Store
	Host  *hostctl.Host
	// MongodBinary is the server binary mongod.start runs, and its version.
	MongodBinary  string
	MongodVersion string
	WtdVersion    string
	// SampleInterval is the sampler's period; 0 turns the sampler off.
	SampleInterval time.Duration
	StartOptions   hostctl.StartOptions
	// Dir holds the run's server data and logs; empty means a new temp dir
	// removed when the run finishes.
	Dir string
	// Log receives the run's events as lines (may be nil).
	Log io.Writer
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
	ID   int64
	cfg  Config
	info RunInfo
	dir  string
	tmp  bool

	mu       sync.Mutex
	servers  []*Server
	steps    []StepRecord
	lastDrop *DropRecord
	sampler  *sampler
	start    time.Time
	finished bool
	virt     string
	loadedNS string
	current  string // title of the running step
	// restartsAt holds each server's restart count at the end of the last
	// step, to tell whether a step follows a restart.
	restartsAt map[*Server]int
}

// DropRecord is the last drop_caches attempt of a run.
type DropRecord struct {
	hostctl.DropResult
	At time.Time `json:"at"`
}

// StartRun records a new run and starts its sampler.
func StartRun(ctx context.Context, cfg Config, info RunInfo) (*Run, error) {
	if cfg.Store == nil {
		return nil, errors.New("start run: no store")
	}
	if cfg.Host == nil {
		cfg.Host = hostctl.NewHost()
	}
	r := &Run{cfg: cfg, info: info, start: time.Now()}
	r.dir = cfg.Dir
	if r.dir == "" {
		d, err := os.MkdirTemp("", "wtd-run-")
		if err != nil {
			return nil, fmt.Errorf("start run: %w", err)
		}
		r.dir, r.tmp = d, true
	} else if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	facts, _ := cfg.Host.Facts(ctx, r.dir)
	r.virt = facts.Virtualization.System
	r.restartsAt = map[*Server]int{}
	id, err := cfg.Store.CreateRun(ctx, store.RunInfo{
		PlaybookPath: info.PlaybookPath, Playbook: info.Playbook, Params: info.Params, StartedAt: r.start,
		Host: hostFacts(facts), TargetPath: cfg.MongodBinary, TargetVersion: cfg.MongodVersion, WtdVersion: cfg.WtdVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	r.ID = id
	r.sampler = newSampler(r, cfg.SampleInterval)
	r.sampler.start()
	return r, nil
}

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
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, "%s %-5s %-6s %s\n", now.Format("15:04:05"), level, source, msg)
	}
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

func mb(b uint64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

// Finish stops every server the run started, stops the sampler (keeping
// what it recorded) and records the run's end. It is safe to call twice.
func (r *Run) Finish(ctx context.Context, status, reason string) error {
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return nil
	}
	r.finished = true
	servers := append([]*Server(nil), r.servers...)
	r.mu.Unlock()
	r.sampler.stop()
	var first error
	for _, s := range servers {
		if err := s.Stop(ctx); err != nil && first == nil {
			first = fmt.Errorf("stop %s: %w", s.Name, err)
		}
	}
	if reason != "" {
		r.Eventf(levelFor(status), "run", "run %s: %s", status, reason)
	} else {
		r.Eventf("info", "run", "run %s", status)
	}
	if err := r.cfg.Store.FinishRun(ctx, r.ID, status, redact(reason), time.Now()); err != nil && first == nil {
		first = err
	}
	if err := r.cfg.Store.Flush(ctx); err != nil && first == nil {
		first = err
	}
	if r.tmp {
		os.RemoveAll(r.dir)
	}
	return first
}

func levelFor(status string) string {
	if status == StatusOK {
		return "info"
	}
	return "error"
}

func redact(s string) string { return store.RedactURI(s) }

func (r *Run) hostVirt(context.Context) string { return r.virt }

func (r *Run) lastNS() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loadedNS
}

func (r *Run) noteLoaded(ns string) {
	r.mu.Lock()
	r.loadedNS = ns
	r.mu.Unlock()
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
