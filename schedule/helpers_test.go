package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
	"wtd/internal/testhost"
)

// fixture is a scheduler's surroundings in a test: a results database, a
// state directory, a log and a launcher that records real runs without
// Lua.
type fixture struct {
	t     *testing.T
	st    *store.Store
	state string
	dir   string
	log   *syncLog
	// hold is how long each run lasts unless aborted; server makes each
	// run start a minimongod first.
	hold   time.Duration
	server bool
	// applyTimeout bounds a window transition (0: the default).
	applyTimeout time.Duration

	mu   sync.Mutex
	pids map[int64]int // run id -> its server's pid
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	return &fixture{t: t, st: st, state: t.TempDir(), dir: t.TempDir(), log: &syncLog{}, hold: 100 * time.Millisecond, pids: map[int64]int{}}
}

// launch starts a run as the daemon would, without Lua: it records the
// run with its trigger, starts a server if asked, waits hold or until
// aborted, and finishes it.
func (f *fixture) launch(ctx context.Context, job Job) (*Handle, error) {
	cfg := engine.Config{Store: f.st, Host: testhost.New(f.t), Trigger: job.Trigger, StateDir: f.state}
	if f.server {
		cfg.MongodBinary = testbin.Minimongod(f.t)
	}
	r, err := engine.StartRun(ctx, cfg, engine.RunInfo{PlaybookPath: job.Schedule.Playbook, Playbook: "-- " + job.Schedule.Name})
	if err != nil {
		job.Lock.Release()
		return nil, err
	}
	done := make(chan RunEnd, 1)
	go func() {
		start := time.Now()
		status, reason := record.StatusOK, ""
		if f.server {
			srv, err := r.StartServer(r.Context(), engine.ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
			if err != nil {
				status, reason = record.StatusFailed, err.Error()
			} else {
				f.mu.Lock()
				f.pids[r.ID] = srv.PID()
				f.mu.Unlock()
			}
		}
		if status == record.StatusOK {
			select {
			case <-time.After(f.hold):
			case <-r.Context().Done():
				status, reason = record.StatusAborted, "interrupted: "+context.Cause(r.Context()).Error()
			}
		}
		fctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.Finish(fctx, status, reason); err != nil {
			f.t.Errorf("finish run %d: %v", r.ID, err)
		}
		job.Lock.Release() // as runner.Run.Play does, before it returns
		done <- RunEnd{RunID: r.ID, Status: status, Reason: reason, Duration: time.Since(start)}
	}()
	return &Handle{RunID: r.ID, Abort: r.Abort, Done: done}, nil
}

func (f *fixture) pid(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pids[id]
}

// config parses a config written in the test's directory.
func (f *fixture) config(text string) Config {
	f.t.Helper()
	cfg, err := ParseConfig(filepath.Join(f.dir, "wtd.yaml"), []byte(text))
	if err != nil {
		f.t.Fatal(err)
	}
	return cfg
}

func (f *fixture) options() Options {
	return Options{Store: f.st, StateDir: f.state, Launch: f.launch, Log: slog.New(slog.NewTextHandler(f.log, nil)),
		RetryMin: 100 * time.Millisecond, RetryMax: 400 * time.Millisecond, ApplyTimeout: f.applyTimeout}
}

// clock is a scheduler's time in a test: it moves only when set.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// startAt starts cfg's scheduler on clock c as Serve starts it (catch-up
// and windows), without its loop: the test moves c and calls tick. The
// scheduler stops when the test ends.
func (f *fixture) startAt(cfg Config, c *clock) *Scheduler {
	opts := f.options()
	opts.Now = c.now
	s := New(cfg, opts)
	s.start(context.Background())
	f.t.Cleanup(func() { s.Stop(errors.New("the test is over")) })
	return s
}

// plant records ev in the history as an earlier daemon would have.
func (f *fixture) plant(ev store.ScheduleEvent) {
	f.t.Helper()
	if _, err := f.st.AddScheduleEvent(context.Background(), ev); err != nil {
		f.t.Fatal(err)
	}
}

// serving is a scheduler running Serve in the background.
type serving struct {
	s       *Scheduler
	signals chan os.Signal
	done    chan error
}

// serve starts cfg's scheduler; reload is what SIGHUP reads.
func (f *fixture) serve(cfg Config, reload func() (Config, error)) *serving {
	s := New(cfg, f.options())
	sv := &serving{s: s, signals: make(chan os.Signal, 1), done: make(chan error, 1)}
	go func() { sv.done <- s.Serve(context.Background(), sv.signals, reload) }()
	f.t.Cleanup(func() { sv.stop(f.t) })
	return sv
}

// stop sends SIGTERM and waits for Serve to return; it says how long that
// took.
func (sv *serving) stop(t *testing.T) time.Duration {
	start := time.Now()
	select {
	case sv.signals <- syscall.SIGTERM:
	default:
	}
	select {
	case err := <-sv.done:
		sv.done <- err // later calls return at once
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("Serve did not return within 40 s of SIGTERM")
	}
	return time.Since(start)
}

// waitUntil polls cond every 20 ms for up to within.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fixture) runs() []store.Run {
	f.t.Helper()
	runs, err := f.st.ListRuns(context.Background(), 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return runs
}

func (f *fixture) events(q store.EventQuery) []store.ScheduleEvent {
	f.t.Helper()
	evs, err := f.st.ScheduleEvents(context.Background(), q)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

// syncLog collects the scheduler's log lines.
type syncLog struct {
	mu sync.Mutex
	b  []byte
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

func processGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// A zombie has exited.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			return i+2 < len(b) && b[i+2] == 'Z'
		}
	}
	return false
}
