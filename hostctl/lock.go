package hostctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LockHolder says who holds the experiment lock. It is written into the
// lock file by the holder, so a waiting process can name it. Beside its
// pid, the holder is named by its start time (clock ticks after boot),
// pid namespace and the host's boot, since a pid alone can name another
// process.
type LockHolder struct {
	PID        int       `json:"pid"`
	StartTicks uint64    `json:"start_ticks,omitempty"`
	PIDNS      string    `json:"pid_ns,omitempty"`
	BootID     string    `json:"boot_id,omitempty"`
	RunID      int64     `json:"run_id,omitempty"`
	Playbook   string    `json:"playbook,omitempty"`
	Trigger    string    `json:"trigger,omitempty"`
	DB         string    `json:"db,omitempty"`
	Since      time.Time `json:"since"`
}

// selfIdentity is what names this process beside its pid, as read from
// /proc: its start time, pid namespace and the host's boot id (zero where
// the system does not say).
func selfIdentity() (startTicks uint64, pidNS, bootID string) {
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		if st, err := parsePIDStat(string(b)); err == nil {
			startTicks = st.StartTicks
		}
	}
	pidNS, _ = os.Readlink("/proc/self/ns/pid")
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		bootID = strings.TrimSpace(string(b))
	}
	return startTicks, pidNS, bootID
}

// String words the holder for messages: "run 12 of playbooks/x.lua (pid 4711, since 10:02:03)".
func (h LockHolder) String() string {
	var b strings.Builder
	if h.RunID > 0 {
		fmt.Fprintf(&b, "run %d", h.RunID)
	} else {
		b.WriteString("a run")
	}
	if h.Playbook != "" {
		fmt.Fprintf(&b, " of %s", h.Playbook)
	}
	fmt.Fprintf(&b, " (pid %d", h.PID)
	if !h.Since.IsZero() {
		fmt.Fprintf(&b, ", since %s", h.Since.Local().Format("2006-01-02 15:04:05"))
	}
	b.WriteString(")")
	return b.String()
}

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("another experiment holds the lock")

// LockedError is ErrLocked with the holder named.
type LockedError struct {
	Path   string
	Holder LockHolder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another experiment runs on this host: %s holds %s", e.Holder, e.Path)
}

// Unwrap makes errors.Is(err, ErrLocked) hold.
func (e *LockedError) Unwrap() error { return ErrLocked }

// ExperimentLock is the host-wide experiment lock: one run at a time, since
// drop_caches and the page cache are host-wide. It is an flock on a file, so
// the kernel releases it when the holder dies, however it dies.
type ExperimentLock struct {
	f      *os.File
	path   string
	holder LockHolder
}

// LockPath is the lock file under a state directory.
func LockPath(stateDir string) string { return filepath.Join(stateDir, "experiment.lock") }

// TryLock takes the lock at path without waiting; a held lock is a
// *LockedError naming the holder.
func TryLock(path string, holder LockHolder) (*ExperimentLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("experiment lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("experiment lock: %w", err)
	}
	ok, err := tryFlockBriefly(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("experiment lock %s: %w", path, err)
	}
	if !ok {
		f.Close()
		return nil, &LockedError{Path: path, Holder: ReadLockHolder(path)}
	}
	if holder.PID == 0 {
		holder.PID = os.Getpid()
		holder.StartTicks, holder.PIDNS, holder.BootID = selfIdentity()
	}
	if holder.Since.IsZero() {
		holder.Since = time.Now()
	}
	l := &ExperimentLock{f: f, path: path, holder: holder}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// tryFlockBriefly is tryFlock that tries again for up to 50 ms: a process
// that tests whether a run's lock is held (the results database does, to
// tell a killed run from a live one) takes it for an instant.
func tryFlockBriefly(f *os.File) (bool, error) {
	for i := 0; ; i++ {
		ok, err := tryFlock(f)
		if ok || err != nil || i == 10 {
			return ok, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lock takes the lock at path, waiting while another process holds it.
// Every interval (30 s when 0) of waiting, and once at the start, waiting is
// called with the holder. It returns ctx's error when ctx ends first.
func Lock(ctx context.Context, path string, holder LockHolder, interval time.Duration, waiting func(LockHolder)) (*ExperimentLock, error) {
	if interval <= 0 {
		interval = 30 * time.Second
	}
	const poll = 200 * time.Millisecond
	var lastSaid time.Time
	for {
		l, err := TryLock(path, holder)
		var le *LockedError
		if !errors.As(err, &le) {
			return l, err
		}
		if waiting != nil && time.Since(lastSaid) >= interval {
			waiting(le.Holder)
			lastSaid = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the experiment lock (%s): %w", le.Holder, context.Cause(ctx))
		case <-time.After(poll):
		}
	}
}

// ReadLockHolder returns what the holder wrote into the lock file (zero
// when nothing readable is there).
func ReadLockHolder(path string) LockHolder {
	var h LockHolder
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h
}

// SetRun records the run the lock is held for, once its id is known.
func (l *ExperimentLock) SetRun(id int64) error {
	l.holder.RunID = id
	return l.write()
}

// Holder returns what the lock file says.
func (l *ExperimentLock) Holder() LockHolder { return l.holder }

// Path returns the lock file's path.
func (l *ExperimentLock) Path() string { return l.path }

func (l *ExperimentLock) write() error {
	// Write, then cut to length: a waiting process never reads an empty file.
	b, _ := json.Marshal(l.holder)
	b = append(b, '\n')
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("experiment lock: %w", err)
	}
	if err := l.f.Truncate(int64(len(b))); err != nil {
		return fmt.Errorf("experiment lock: %w", err)
	}
	return nil
}

// Release gives the lock up. It is safe to call twice.
func (l *ExperimentLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Truncate(0)
	unflock(l.f)
	l.f.Close()
	l.f = nil
}

// File is the lock's open file, to hand to a child process (as one of
// exec.Cmd's ExtraFiles) that carries out the run: the flock belongs to
// the open file description, which the child's copy shares.
func (l *ExperimentLock) File() *os.File { return l.f }

// HandOver closes this process's copy of the lock file without giving the
// lock up: the child that inherited it (File) holds it until it releases
// it or exits, however it exits. It is safe to call after Release.
func (l *ExperimentLock) HandOver() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
}

// openFilePath is the path of the file f has open, as the system says
// (/proc/self/fd), else f's name.
func openFilePath(f *os.File) string {
	if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil && filepath.IsAbs(p) {
		return p
	}
	return f.Name()
}

// InheritLock holds the lock through f, the lock file a parent handed over
// (File): the flock on an open file description that holds it succeeds.
// When f's description does not hold it and another process does, it is a
// *LockedError. holder is written into the file for this process (its PID
// when 0); f is kept from the processes this one starts.
func InheritLock(f *os.File, holder LockHolder) (*ExperimentLock, error) {
	ok, err := tryFlock(f)
	if err != nil {
		return nil, fmt.Errorf("experiment lock handed over as %s: %w", f.Name(), err)
	}
	if !ok {
		return nil, &LockedError{Path: f.Name(), Holder: ReadLockHolder(f.Name())}
	}
	keepFromChildren(f)
	if holder.PID == 0 {
		holder.PID = os.Getpid()
		holder.StartTicks, holder.PIDNS, holder.BootID = selfIdentity()
	}
	if holder.Since.IsZero() {
		holder.Since = time.Now()
	}
	l := &ExperimentLock{f: f, path: openFilePath(f), holder: holder}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}
