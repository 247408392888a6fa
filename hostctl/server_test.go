package hostctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartEarlyExit(t *testing.T) {
	dir := t.TempDir()
	bin := script(t, dir, "fake-mongod", "echo \"starting with $*\"\necho 'bad option --wiredTigerCacheSizeGB' >&2\nexit 3\n")
	spec := ServerSpec{Binary: bin, DBPath: filepath.Join(dir, "db"), Port: 0}
	_, err := Start(context.Background(), spec, StartOptions{StartTimeout: 10 * time.Second})
	if err == nil {
		t.Fatal("Start succeeded with a binary that exits")
	}
	msg := err.Error()
	for _, want := range []string{
		"start mongod: exited with status 3 before answering hello",
		"last log lines: starting with --port",
		"bad option --wiredTigerCacheSizeGB",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// dbpath created, output captured in <dbpath>/mongod.log.
	b, err := os.ReadFile(filepath.Join(dir, "db", "mongod.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "bad option") {
		t.Errorf("log file lacks the output: %q", b)
	}
}

// hangingScript writes a server that never listens, and that records its
// own pid and a child's pid (same process group) in dir.
func hangingScript(t *testing.T, dir string) string {
	return script(t, dir, "hang", "echo $$ > "+dir+"/pid\nsleep 300 &\necho $! > "+dir+"/child\necho 'waiting forever'\nwait\n")
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	var err error
	for range 50 { // the script may still be writing
		if b, err = os.ReadFile(path); err == nil && len(b) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("read pid from %s: %v", path, err)
	}
	return pid
}

// assertGone checks, with kill(pid, 0), that pid has ended. Death after
// SIGKILL is asynchronous, and an orphan stays a zombie until init reaps
// it, so it polls for a while and counts a zombie as gone.
func assertGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || isZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s pid %d still exists (kill 0: %v)", what, pid, err)
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}

func TestStartTimeoutLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	spec := ServerSpec{Binary: hangingScript(t, dir), DBPath: filepath.Join(dir, "db")}
	start := time.Now()
	_, err := Start(context.Background(), spec, StartOptions{StartTimeout: 700 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("Start succeeded with a server that never answers")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Start took %s with a 700ms timeout", el)
	}
	msg := err.Error()
	for _, want := range []string{"start mongod: no answer to hello within 700ms", "killed it", "waiting forever"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	assertGone(t, "server", readPID(t, filepath.Join(dir, "pid")))
	assertGone(t, "server's child", readPID(t, filepath.Join(dir, "child")))
}

func TestStartCancelledLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	spec := ServerSpec{Binary: hangingScript(t, dir), DBPath: filepath.Join(dir, "db")}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, spec, StartOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	assertGone(t, "server", readPID(t, filepath.Join(dir, "pid")))
}

func TestStartRejectsBadSettings(t *testing.T) {
	dir := t.TempDir()
	spec := ServerSpec{Binary: hangingScript(t, dir), DBPath: filepath.Join(dir, "db"), Settings: Settings{CacheSizeGB: 0.1}}
	_, err := Start(context.Background(), spec, StartOptions{})
	if err == nil || !strings.Contains(err.Error(), "must be greater than or equal to 0.25") {
		t.Fatalf("err = %v, want the cacheSizeGB bound", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
		t.Error("the server was started despite invalid settings")
	}
	spec.CacheSizeGB, spec.BindIP = 0, "0.0.0.0"
	if _, err := Start(context.Background(), spec, StartOptions{}); err == nil || !strings.Contains(err.Error(), "only loopback") {
		t.Fatalf("err = %v, want a loopback refusal", err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	dir := t.TempDir()
	spec := ServerSpec{Binary: filepath.Join(dir, "no-such-mongod"), DBPath: filepath.Join(dir, "db")}
	_, err := Start(context.Background(), spec, StartOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "start mongod: ") {
		t.Fatalf("err = %v, want start mongod: ...", err)
	}
}

func TestExitDescription(t *testing.T) {
	if got := exitDescription(nil); got != "exited" {
		t.Errorf("nil state: %q", got)
	}
}
