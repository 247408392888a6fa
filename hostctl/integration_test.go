package hostctl

// Integration tests against the project's own server, minimongod (package
// wtd/cmd/minimongod, cgo + libwiredtiger), built once on first use; when
// that build fails these tests fail with the build output, while the unit
// tests of this package run regardless.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"wtd/internal/testbin"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestMain(m *testing.M) {
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := StopAll(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "stop servers left by tests:", err)
		code = 1
	}
	cancel()
	os.Exit(code)
}

// minimongodBinary returns the built-in server, built once per test binary.
func minimongodBinary(t *testing.T) string { return testbin.Minimongod(t) }

// startMinimongod starts a fresh server on a free port in a temp dbpath and
// stops it when the test ends.
func startMinimongod(t *testing.T, cacheGB float64) *Server {
	t.Helper()
	bin := minimongodBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := Start(ctx, ServerSpec{Binary: bin, DBPath: filepath.Join(t.TempDir(), "db"), Settings: Settings{CacheSizeGB: cacheGB}}, StartOptions{})
	if err != nil {
		t.Fatalf("start minimongod: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("stop minimongod: %v", err)
		}
	})
	return s
}

func cacheMaxBytes(t *testing.T, s *Server) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := s.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		t.Fatalf("serverStatus: %v", err)
	}
	rv, err := raw.LookupErr("wiredTiger", "cache", "maximum bytes configured")
	if err != nil {
		t.Fatalf("serverStatus has no wiredTiger.cache[\"maximum bytes configured\"]: %v", err)
	}
	var cache = bson.M{"maximum bytes configured": rv.AsInt64()}
	switch v := cache["maximum bytes configured"].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case float64:
		return int64(v)
	default:
		t.Fatalf("wiredTiger.cache[\"maximum bytes configured\"] = %v (%T)", v, v)
		return 0
	}
}

func TestIntegrationStartHelloVersion(t *testing.T) {
	s := startMinimongod(t, 0.5)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Err(); err != nil {
		t.Fatalf("hello: %v", err)
	}
	if !strings.HasPrefix(s.URI(), "mongodb://127.0.0.1:") || s.Port() == 0 || s.PID() == 0 {
		t.Errorf("URI %s, port %d, pid %d", s.URI(), s.Port(), s.PID())
	}
	v, err := s.Version(ctx)
	if err != nil || v == "" {
		t.Fatalf("Version = %q, %v", v, err)
	}
	bv, err := BinaryVersion(ctx, s.Spec().Binary)
	if err != nil {
		t.Fatalf("BinaryVersion: %v", err)
	}
	if bv != v {
		t.Errorf("--version says %q, buildInfo says %q", bv, v)
	}
	if got := cacheMaxBytes(t, s); got != 512<<20 {
		t.Errorf("maximum bytes configured = %d, want %d for 0.5 GB", got, 512<<20)
	}
}

func TestIntegrationRestartCacheSize(t *testing.T) {
	s := startMinimongod(t, 0.5)
	oldPID, port := s.PID(), s.Port()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// A bad setting is refused before the running server is touched.
	if err := s.Restart(ctx, ServerSpec{Settings: Settings{CacheSizeGB: 0.1}}); err == nil {
		t.Fatal("Restart accepted cacheSizeGB 0.1")
	}
	if s.PID() != oldPID || s.ExitErr() != nil {
		t.Fatal("a refused Restart changed the server")
	}
	if err := s.Restart(ctx, ServerSpec{Settings: Settings{CacheSizeGB: 0.25}}); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if s.PID() == oldPID || s.Port() != port {
		t.Errorf("after restart pid %d (was %d), port %d (was %d)", s.PID(), oldPID, s.Port(), port)
	}
	assertGone(t, "old server", oldPID)
	if got := cacheMaxBytes(t, s); got != 268435456 {
		t.Errorf("maximum bytes configured = %d, want 268435456 for 0.25 GB", got)
	}
	if s.Spec().CacheSizeGB != 0.25 {
		t.Errorf("Spec().CacheSizeGB = %v", s.Spec().CacheSizeGB)
	}
}

func TestIntegrationStopLeavesNoProcess(t *testing.T) {
	s := startMinimongod(t, 0.25)
	pid := s.PID()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if el := time.Since(start); el > 25*time.Second {
		t.Errorf("graceful stop took %s: shutdown was probably not obeyed", el)
	}
	select {
	case <-s.Exited():
	default:
		t.Fatal("Exited not closed after Stop")
	}
	if err := s.ExitErr(); err != nil {
		t.Errorf("ExitErr after Stop = %v, want nil", err)
	}
	assertGone(t, "server", pid)
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
}

func TestIntegrationCrashIsNoticed(t *testing.T) {
	s := startMinimongod(t, 0.25)
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("Exited not closed 10s after kill -9")
	}
	err := s.ExitErr()
	if err == nil || !strings.Contains(err.Error(), "was killed by signal 9 (SIGKILL)") {
		t.Fatalf("ExitErr = %v, want a crash by SIGKILL", err)
	}
}

// TestIntegrationProcessExit: a process handle says how its process
// ended (the signal, or that wtd stopped it) and when, and keeps standing
// for that process after a restart.
func TestIntegrationProcessExit(t *testing.T) {
	cases := []struct {
		name        string
		end         func(*Server) error
		wantSignal  int
		wantName    string
		wantStopped bool
	}{
		{"killed", func(s *Server) error { return syscall.Kill(s.PID(), syscall.SIGKILL) }, 9, "SIGKILL", false},
		{"stopped", func(s *Server) error { return s.Stop(context.Background()) }, 0, "", true},
		{"restarted", func(s *Server) error { return s.Restart(context.Background(), s.Spec()) }, 0, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startMinimongod(t, 0.25)
			pr := s.Process()
			if _, ended := pr.Exit(); ended {
				t.Fatal("Exit says a running process ended")
			}
			before := time.Now()
			if err := c.end(s); err != nil {
				t.Fatal(err)
			}
			select {
			case <-pr.Exited():
			case <-time.After(10 * time.Second):
				t.Fatal("Exited not closed 10 s after the end")
			}
			exit, ended := pr.Exit()
			if !ended || exit.Signal != c.wantSignal || exit.SignalName != c.wantName || exit.Stopped != c.wantStopped {
				t.Errorf("exit %+v (ended %v), want signal %d %q, stopped %v", exit, ended, c.wantSignal, c.wantName, c.wantStopped)
			}
			if exit.At.Before(before) || time.Since(exit.At) > 10*time.Second {
				t.Errorf("exit at %s, want after %s", exit.At, before)
			}
			if c.name == "restarted" && (s.Process() == pr || s.Process().PID() == pr.PID()) {
				t.Errorf("after a restart the server's process is still pid %d", pr.PID())
			}
		})
	}
}

func TestIntegrationStopAll(t *testing.T) {
	a := startMinimongod(t, 0.25)
	b := startMinimongod(t, 0.25)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := StopAll(ctx); err != nil {
		t.Fatalf("StopAll: %v", err)
	}
	assertGone(t, "server a", a.PID())
	assertGone(t, "server b", b.PID())
}

func TestIntegrationCollectorWatchesServer(t *testing.T) {
	s := startMinimongod(t, 0.25)
	c := NewHost().NewCollector()
	c.Watch("mongod", int32(s.PID()))
	ctx := context.Background()
	if _, err := c.Collect(ctx); err != nil {
		t.Fatalf("collect: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	m, err := c.Collect(ctx)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	if m["proc.mongod.rss"] <= 0 {
		t.Errorf("proc.mongod.rss = %v", m["proc.mongod.rss"])
	}
	if _, ok := m["proc.mongod.cpu_pct"]; !ok {
		t.Error("proc.mongod.cpu_pct missing")
	}
}
