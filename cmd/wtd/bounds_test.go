package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pathological keeps one Go call (gopher-lua's pattern matcher) busy for
// longer than any test, after starting a server.
const pathological = `
local m = mongod.start{}
log("stuck")
print(string.find(string.rep("a", 2000), ".-.-.-.-.-.-.-b"))
`

// waitExit waits for cmd to exit within d and returns its exit status; it
// fails the test (killing the process) when it does not.
func waitExit(t *testing.T, cmd interface {
	Wait() error
}, kill func(), d time.Duration, what string, out *syncBuffer) {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		kill()
		<-done
		t.Fatalf("%s: wtd run still running after %s:\n%s", what, d, out.String())
	}
}

// TestPathologicalPatternFailsTheRun: the pattern ends the run, failed,
// with an error naming the playbook line, within its 5 s budget, and wtd
// run exits 1 with its server stopped.
func TestPathologicalPatternFailsTheRun(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, pathological)
	cmd, out := startWtd(t, t.TempDir(), "run", "--db", db, "--mongod", mm, "--sample-interval", "0", pb)
	start := time.Now()
	waitExit(t, cmd, func() { cmd.Process.Kill() }, 30*time.Second, "pathological pattern", out)
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), pb+`:4: string.find: pattern ".-.-.-.-.-.-.-b" on a 2000-byte string matched for more than 5s`) {
		t.Errorf("exit %d after %s:\n%s", code, time.Since(start), out.String())
	}
	for _, pid := range serverPIDs(out.String()) {
		t.Errorf("server %d still running", pid)
	}
	runs, _ := openDB(t, db).ListRuns(context.Background(), 5)
	if len(runs) != 1 || runs[0].Status != "failed" || !strings.HasPrefix(runs[0].Reason, pb+":4: string.find: pattern") {
		t.Errorf("runs = %+v", runs)
	}
}

// TestStuckRunEndsWithinTenSecondsOfSIGTERM: SIGTERM to a wtd run whose
// playbook is in a Go call that does not return ends it within 10 s: exit
// 130, the run recorded aborted with the signal, its server stopped.
func TestStuckRunEndsWithinTenSecondsOfSIGTERM(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, pathological)
	cmd, out := startWtd(t, t.TempDir(), "run", "--db", db, "--mongod", mm, "--sample-interval", "0", pb)
	waitFor(t, out, "playbook stuck", 60*time.Second)
	pids := serverPIDs(out.String())
	if len(pids) == 0 {
		t.Fatalf("no server running under wtd:\n%s", out.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	start := time.Now()
	waitExit(t, cmd, func() { cmd.Process.Kill() }, 20*time.Second, "SIGTERM", out)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("wtd run exited %s after SIGTERM, want within 10 s", took)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130:\n%s", code, out.String())
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			t.Errorf("server %d still running after SIGTERM", pid)
		}
	}
	runs, _ := openDB(t, db).ListRuns(context.Background(), 5)
	if len(runs) != 1 || runs[0].Status != "aborted" || runs[0].Reason != "interrupted: terminated" || runs[0].EndedAt.IsZero() {
		t.Errorf("runs = %+v", runs)
	}
}

// TestMemoryLimitFailsTheRun: a playbook that holds more than --max-memory
// ends failed, "playbook used more than 256 MiB", and wtd's memory never
// grows far past the limit. A single string over a quarter of the limit
// is refused at its line.
func TestMemoryLimitFailsTheRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local t = {}
for i = 1, 64 do t[i] = string.rep("x", 64 * 1024 * 1024) end
`)
	cmd, out := startWtd(t, t.TempDir(), "run", "--db", db, "--max-memory", "256MiB", "--sample-interval", "0", pb)
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cmd.ProcessState == nil {
			if rss := rssBytes(cmd.Process.Pid); rss > peak {
				peak = rss
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitExit(t, cmd, func() { cmd.Process.Kill() }, 60*time.Second, "memory", out)
	<-done
	t.Logf("peak resident memory %d MiB", peak>>20)
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), "playbook used more than 256 MiB") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	if peak > 768<<20 {
		t.Errorf("wtd's resident memory reached %d MiB with a limit of 256 MiB", peak>>20)
	}
	runs, _ := openDB(t, db).ListRuns(context.Background(), 5)
	if len(runs) != 1 || runs[0].Status != "failed" || !strings.HasPrefix(runs[0].Reason, "playbook used more than 256 MiB") {
		t.Errorf("runs = %+v", runs)
	}

	big := writePlaybook(t, "local s = string.rep('x', 1000)\nlocal t = string.rep('x', 65 * 1024 * 1024)\n")
	res := runCLI(t, nil, "run", "--db", db, "--max-memory", "256MiB", big)
	if res.code != 1 || !strings.Contains(res.stderr, big+":2: string.rep: the result would be 65 MiB, more than 64 MiB") {
		t.Errorf("a string over a quarter of the limit: exit %d\n%s", res.code, res.stderr)
	}
	if res := runCLI(t, nil, "run", "--db", db, "--max-memory", "lots", big); res.code != 2 || !strings.Contains(res.stderr, `--max-memory: size "lots"`) {
		t.Errorf("--max-memory lots: exit %d\n%s", res.code, res.stderr)
	}
}

// rssBytes is the resident memory of pid (0 when unknown).
func rssBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
