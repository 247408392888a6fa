package hostctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestExperimentLock(t *testing.T) {
	path := LockPath(t.TempDir())
	a, err := TryLock(path, LockHolder{Playbook: "a.lua", Trigger: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetRun(7); err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(path, LockHolder{Playbook: "b.lua"})
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock: %v, want a LockedError", err)
	}
	if le.Holder.RunID != 7 || le.Holder.Playbook != "a.lua" || le.Holder.PID != os.Getpid() {
		t.Errorf("holder = %+v", le.Holder)
	}
	// Beside its pid, the holder is named by its start time, pid namespace
	// and the host's boot.
	stat, _ := os.ReadFile("/proc/self/stat")
	self, _ := parsePIDStat(string(stat))
	ns, _ := os.Readlink("/proc/self/ns/pid")
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if h := le.Holder; h.StartTicks == 0 || h.StartTicks != self.StartTicks || h.PIDNS == "" || h.PIDNS != ns ||
		h.BootID == "" || h.BootID != strings.TrimSpace(string(boot)) {
		t.Errorf("holder %+v, want start %d, pid namespace %s, boot %s", h, self.StartTicks, ns, boot)
	}
	if !strings.HasPrefix(err.Error(), "another experiment runs on this host: run 7 of a.lua (pid ") {
		t.Errorf("message: %v", err)
	}

	// Lock waits, says who holds the lock, and gets it once released.
	var said atomic.Int32
	go func() {
		time.Sleep(300 * time.Millisecond)
		a.Release()
	}()
	start := time.Now()
	b, err := Lock(context.Background(), path, LockHolder{Playbook: "b.lua"}, time.Hour, func(h LockHolder) {
		if h.RunID == 7 {
			said.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 250*time.Millisecond || said.Load() != 1 {
		t.Errorf("Lock returned after %s having named the holder %d times", time.Since(start), said.Load())
	}
	if h := ReadLockHolder(path); h.Playbook != "b.lua" {
		t.Errorf("lock file names %+v", h)
	}

	// A cancelled wait gives up with the holder named.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, path, LockHolder{}, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "b.lua") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled wait: %v", err)
	}
	b.Release()
	b.Release() // twice is fine
	c, err := TryLock(path, LockHolder{})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	c.Release()
}

// TestTryLockOutlastsAProbe: another process that tests whether the lock
// is held takes it for an instant; TryLock does not call the lock held
// for that.
func TestTryLockOutlastsAProbe(t *testing.T) {
	path := LockPath(t.TempDir())
	for i := range 20 {
		probe, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := tryFlock(probe); !ok {
			t.Fatalf("probe: %v", err)
		}
		go func() {
			time.Sleep(time.Millisecond)
			probe.Close()
		}()
		l, err := TryLock(path, LockHolder{Playbook: "a.lua"})
		if err != nil {
			t.Fatalf("round %d: TryLock while a probe held the lock for 1 ms: %v", i, err)
		}
		l.Release()
	}
}

func TestLockHolderString(t *testing.T) {
	h := LockHolder{PID: 42}
	if got := h.String(); got != "a run (pid 42)" {
		t.Errorf("%q", got)
	}
	if LockPath("/s") != filepath.Join("/s", "experiment.lock") {
		t.Error(LockPath("/s"))
	}
}

// TestInheritedLockKnowsItsFile: a lock handed over through a file
// descriptor, whatever name the receiver gives it, says the lock file's
// path and names the receiver by its start time and pid namespace.
func TestInheritedLockKnowsItsFile(t *testing.T) {
	path := LockPath(t.TempDir())
	l, err := TryLock(path, LockHolder{Playbook: "a.lua"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	fd, err := syscall.Dup(int(l.File().Fd()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := InheritLock(os.NewFile(uintptr(fd), "lock-fd-3"), LockHolder{Playbook: "a.lua"})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.Path() != path {
		t.Errorf("inherited lock's path %q, want %s", got.Path(), path)
	}
	if h := ReadLockHolder(path); h.PID != os.Getpid() || h.StartTicks == 0 || h.PIDNS == "" || h.BootID == "" {
		t.Errorf("holder written by the receiver: %+v, want its pid, start time, pid namespace and boot", h)
	}
}
