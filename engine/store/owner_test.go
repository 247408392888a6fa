package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockFile makes an experiment lock file; when held, this process holds
// its flock until the test ends.
func lockFile(t *testing.T, held bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "experiment.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if held {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// startOf returns when process pid started (clock ticks after boot).
func startOf(t *testing.T, pid int) int64 {
	t.Helper()
	st, err := readProcStat("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	return st.start
}

// zombiePID returns the pid of a child that has exited and is not reaped
// before the test ends.
func zombiePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := readProcStat("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if err == nil && st.state == 'Z' {
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d is not a zombie after 10 s (%v)", cmd.Process.Pid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// setColumns changes a runs row behind the store's back, as another (or an
// older) wtd would have written it.
func setColumns(t *testing.T, s *Store, id int64, set string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE runs SET "+set+" WHERE id = ?", append(args, id)...); err != nil {
		t.Fatal(err)
	}
}

// rowStatus reads a run's and its steps' status and reason straight from
// the file, as sqlite3 shows them.
func rowStatus(t *testing.T, s *Store, id int64) (status, reason, stepStatus, stepError string) {
	t.Helper()
	db, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT status, reason FROM runs WHERE id = ?", id).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT status, error FROM steps WHERE run_id = ?", id).Scan(&stepStatus, &stepError); err != nil {
		t.Fatal(err)
	}
	return status, reason, stepStatus, stepError
}

// TestRunGoesOnWhileItsOwnerLivesAndHoldsItsLock: a run marked running is
// going on only while the process that owns it (pid, start time, pid
// namespace, boot) is alive and holds the run's experiment lock; anything
// else reads aborted with the proof, and EndAbandonedRuns writes that into
// the run's row and its running steps.
func TestRunGoesOnWhileItsOwnerLivesAndHoldsItsLock(t *testing.T) {
	self := ThisProcess()
	if self.Start == 0 || self.PIDNS == "" || self.BootID == "" {
		t.Fatalf("this process's identity is incomplete: %+v", self)
	}
	parent := os.Getppid() // go test: alive while the test runs
	tests := []struct {
		name   string
		info   func(t *testing.T) RunInfo
		fix    func(t *testing.T, s *Store, id int64) // what another or an older wtd wrote
		reason string                                 // "": running; else aborted, with this in the reason
	}{
		{"this process, lock held", func(t *testing.T) RunInfo {
			return RunInfo{LockPath: lockFile(t, true)}
		}, nil, ""},
		{"this process, no lock", func(t *testing.T) RunInfo { return RunInfo{} }, func(t *testing.T, s *Store, id int64) {
			s.SetHostLock(lockFile(t, false))
		}, ""},
		{"live owner, lock held", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent), OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, nil, ""},
		{"live owner, lock free", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent), OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, false)}
		}, nil, "its experiment lock "},
		{"pid taken by another process, lock held", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent) - 1, OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, nil, "pid " + strconv.Itoa(parent) + " is another process now"},
		{"pid 1 recorded by another process", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: 1, OwnerStart: startOf(t, 1) + 7, OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, nil, "pid 1 is another process now"},
		{"dead owner", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: deadPID(t), OwnerStart: 1, OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, nil, " is gone"},
		{"zombie owner", func(t *testing.T) RunInfo {
			pid := zombiePID(t)
			return RunInfo{OwnerPID: pid, OwnerStart: startOf(t, pid), OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, nil, " has ended"},
		{"owner of another pid namespace, lock free", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: 1, OwnerStart: 1, OwnerPIDNS: "pid:[1]", LockPath: lockFile(t, false)}
		}, nil, "ended without recording its end"},
		{"lock file gone, live owner", func(t *testing.T) RunInfo {
			path := lockFile(t, false)
			os.Remove(path)
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent), OwnerPIDNS: self.PIDNS, LockPath: path}
		}, nil, ""},
		{"another file at the lock's path, live owner", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent), OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, false)}
		}, func(t *testing.T, s *Store, id int64) {
			setColumns(t, s, id, "owner_lock_file = '1:2'")
		}, ""},
		{"another host", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: deadPID(t), OwnerHost: "elsewhere.example", LockPath: lockFile(t, false)}
		}, nil, ""},
		{"a container: another host name, the same boot", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: deadPID(t), OwnerHost: "c0ffee00", OwnerPIDNS: self.PIDNS}
		}, func(t *testing.T, s *Store, id int64) {
			setColumns(t, s, id, "owner_boot_id = ?", self.BootID)
		}, " is gone"},
		{"a container that did not record its pid namespace", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: deadPID(t), OwnerHost: "c0ffee00"}
		}, func(t *testing.T, s *Store, id int64) {
			setColumns(t, s, id, "owner_boot_id = ?", self.BootID)
		}, ""},
		{"before a reboot", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent, OwnerStart: startOf(t, parent), OwnerPIDNS: self.PIDNS, LockPath: lockFile(t, true)}
		}, func(t *testing.T, s *Store, id int64) {
			setColumns(t, s, id, "owner_boot_id = 'an-earlier-boot'")
		}, "the host has rebooted since"},
		{"no lock recorded, live pid, no host lock known", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent}
		}, nil, ""},
		{"no lock recorded, live pid, host lock free", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent}
		}, func(t *testing.T, s *Store, id int64) {
			s.SetHostLock(lockFile(t, false))
		}, "its experiment lock "},
		{"no lock recorded, live pid, host lock held", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: parent}
		}, func(t *testing.T, s *Store, id int64) {
			s.SetHostLock(lockFile(t, true))
		}, ""},
		{"no lock recorded, dead pid", func(t *testing.T) RunInfo {
			return RunInfo{OwnerPID: deadPID(t)}
		}, nil, " is gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := openTest(t, "", Options{})
			info := tt.info(t)
			info.PlaybookPath, info.Playbook = "p.lua", "--"
			id, err := s.CreateRun(ctx, info)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.CreateStep(ctx, StepInfo{RunID: id, Name: "load"}); err != nil {
				t.Fatal(err)
			}
			if tt.fix != nil {
				tt.fix(t, s, id)
			}
			wantStatus := StatusRunning
			if tt.reason != "" {
				wantStatus = StatusAborted
			}
			run, err := s.GetRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != wantStatus || !strings.Contains(run.Reason, tt.reason) {
				t.Errorf("read: %s %q, want %s with %q", run.Status, run.Reason, wantStatus, tt.reason)
			}
			if steps, err := s.Steps(ctx, id); err != nil || len(steps) != 1 || steps[0].Status != wantStatus || steps[0].Error != run.Reason {
				t.Errorf("steps read: %+v (%v), want one %s with the run's reason", steps, err, wantStatus)
			}
			ended, err := s.EndAbandonedRuns(ctx, "a test")
			if err != nil {
				t.Fatal(err)
			}
			status, reason, stepStatus, stepError := rowStatus(t, s, id)
			if status != wantStatus || stepStatus != wantStatus {
				t.Fatalf("recorded: run %s %q, step %s %q; want %s", status, reason, stepStatus, stepError, wantStatus)
			}
			if tt.reason == "" {
				if len(ended) != 0 || reason != "" {
					t.Errorf("a run going on was ended: %+v, reason %q", ended, reason)
				}
				return
			}
			t.Logf("recorded: %s", reason)
			want := run.Reason + "; found by a test at "
			if len(ended) != 1 || ended[0].ID != id || ended[0].Reason != reason || !strings.HasPrefix(reason, want) || stepError != reason {
				t.Errorf("recorded reason %q (step %q), ended %+v; want %q and a time", reason, stepError, ended, want)
			}
			if again, err := s.EndAbandonedRuns(ctx, "a test"); err != nil || len(again) != 0 {
				t.Errorf("ended twice: %+v %v", again, err)
			}
		})
	}
}

// TestRunOfAnOlderDatabase: a run recorded before runs recorded their
// owner's start time, pid namespace and lock (schema 6), owned by a pid
// that lives again (pid 1), is not going on once the host's lock is free.
func TestRunOfAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db, migrations[:6]); err != nil {
		t.Fatal(err)
	}
	boot, _ := os.ReadFile(bootIDPath)
	host, _ := os.Hostname()
	if _, err := db.Exec(`INSERT INTO runs (playbook_path, playbook, playbook_sha256, started_at, status, owner_pid, owner_host, owner_boot_id)
		VALUES ('p.lua', '--', '', 1700000000000000000, 'running', 1, ?, ?)`, host, strings.TrimSpace(string(boot))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := openTest(t, path, Options{})
	if r, err := s.GetRun(ctx, 1); err != nil || r.Status != StatusRunning {
		t.Fatalf("without the host's lock known: %+v %v, want running (pid 1 lives)", r, err)
	}
	s.SetHostLock(lockFile(t, false))
	ended, err := s.EndAbandonedRuns(ctx, "wtd runs")
	if err != nil || len(ended) != 1 || !strings.Contains(ended[0].Reason, "wtd (pid 1) ended without recording its end: killed or crashed (its experiment lock ") {
		t.Fatalf("ended %+v %v", ended, err)
	}
	if r, _ := s.GetRun(ctx, 1); r.Status != StatusAborted || r.Reason != ended[0].Reason || r.OwnerStart != 0 || r.OwnerPIDNS != "" || r.LockPath != "" {
		t.Errorf("after: %+v", r)
	}
}

// startInPIDNamespace starts sleep as pid 1 of a new pid namespace
// (unshare, as root) and returns its pid here and the namespace. It skips
// the test when unshare is not permitted to (EPERM), saying so.
func startInPIDNamespace(t *testing.T) (int, string) {
	t.Helper()
	cmd := exec.Command("unshare", "--fork", "--pid", "--mount-proc", "sleep", "60")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	children := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task/" + strconv.Itoa(cmd.Process.Pid) + "/children"
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			if strings.Contains(out.String(), "Operation not permitted") {
				t.Skipf("unshare may not make a pid namespace here (EPERM): %s", out.String())
			}
			t.Fatalf("unshare exited: %v: %s", err, out.String())
		default:
		}
		if b, err := os.ReadFile(children); err == nil {
			if f := strings.Fields(string(b)); len(f) == 1 {
				pid, _ := strconv.Atoi(f[0])
				if link, err := os.Readlink("/proc/" + f[0] + "/ns/pid"); err == nil && link != ThisProcess().PIDNS {
					return pid, link
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process in a new pid namespace within 10 s: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOwnerInAnotherPIDNamespace: a wtd that ran as pid 1 of its own pid
// namespace (a container) is found from outside by that namespace and
// pid, and its start time tells it from another process. Once it is gone
// the run is not going on, though this namespace's pid 1 lives; where this process cannot see every process
// (it is not in the host's first pid namespace) that cannot be told, and
// with its lock held the run reads running.
func TestOwnerInAnotherPIDNamespace(t *testing.T) {
	inner, ns := startInPIDNamespace(t)
	if ids := nsPIDs(strconv.Itoa(inner)); len(ids) != 2 || ids[1] != 1 {
		t.Fatalf("NSpid of %d = %v, want [%d 1]", inner, ids, inner)
	}
	held := lockFile(t, true)
	ctx := context.Background()
	s := openTest(t, "", Options{})
	tests := []struct {
		name   string
		start  int64
		reason string
	}{
		{"its pid 1, alive", startOf(t, inner), ""},
		{"its pid 1 is another process", startOf(t, inner) + 3, "pid 1 of pid namespace " + ns + " (pid " + strconv.Itoa(inner) + " here) is another process now"},
	}
	for _, tt := range tests {
		id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua", OwnerPID: 1, OwnerStart: tt.start, OwnerPIDNS: ns, LockPath: held})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := s.GetRun(ctx, id)
		if want := map[bool]string{true: StatusRunning, false: StatusAborted}[tt.reason == ""]; r.Status != want || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: %s %q, want %s with %q", tt.name, r.Status, r.Reason, want, tt.reason)
		}
	}
	id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua", OwnerPID: 1, OwnerStart: startOf(t, inner), OwnerPIDNS: ns, LockPath: held})
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(inner, syscall.SIGKILL) // pid 1 of the namespace: all of it ends
	want, reason := StatusAborted, "pid 1 of pid namespace "+ns+" is gone"
	if ThisProcess().PIDNS != initialPIDNS {
		want, reason = StatusRunning, ""
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, _ := s.GetRun(ctx, id)
		if r.Status == want && strings.Contains(r.Reason, reason) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after its pid 1 was killed: %s %q, want %s with %q", r.Status, r.Reason, want, reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReadProcStat: the start time is field 22, counted after the command
// name, which may hold spaces and parentheses.
func TestReadProcStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       procStat
		err        bool
	}{
		{"plain", "4711 (wtd) S 1 4711 4711 0 -1 4194560 1 0 0 0 5 3 0 0 20 0 12 0 987654 123 456 18446744073709551615\n",
			procStat{state: 'S', start: 987654}, false},
		{"name with ') ('", "12 (a) b (c) Z 1 12 12 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n", procStat{state: 'Z', start: 42}, false},
		{"short", "12 (a) S 1 2 3\n", procStat{}, true},
		{"no name", "12 a S 1\n", procStat{}, true},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "stat")
		os.WriteFile(path, []byte(tt.line), 0o600)
		got, err := readProcStat(path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: %+v %v, want %+v (error %v)", tt.name, got, err, tt.want, tt.err)
		}
	}
	if _, err := readProcStat("/proc/0/stat"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no such process: %v, want a not-exist error", err)
	}
}
