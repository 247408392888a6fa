package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// startWtd starts the wtd binary with a state directory of its own choosing
// and returns the command and its combined output.
func startWtd(t testing.TB, state string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	return startWtdEnv(t, nil, state, args...)
}

// startWtdEnv is startWtd with env (NAME=value) added to the environment.
func startWtdEnv(t testing.TB, env []string, state string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	wtd := testbin.Wtd(t)
	cmd := exec.Command(wtd, args...)
	cmd.Env = append(append(os.Environ(), "WTD_STATE_DIR="+state), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, out
}

func waitFor(t *testing.T, out *syncBuffer, text string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s:\n%s", text, within, out.String())
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// TestTwoRunsTakeTurns: two experiments on one host spoil each other's
// numbers, so the second waits for the first, saying who holds the lock,
// and --no-wait refuses at once with exit 3.
func TestTwoRunsTakeTurns(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local m = mongod.start{}
step{ name = "hold", run = function() sleep(2) end }
`)
	first, out1 := startWtd(t, state, "run", "--db", db, "--mongod", mm, "--sample-interval", "0", pb)
	waitFor(t, out1, "hold started", 60*time.Second)

	busy, outBusy := startWtd(t, state, "run", "--no-wait", "--db", db, "--mongod", mm, pb)
	busy.Wait()
	if code := busy.ProcessState.ExitCode(); code != 3 || !strings.Contains(outBusy.String(), "run 1 of "+pb) ||
		!strings.Contains(outBusy.String(), "--no-wait") {
		t.Errorf("--no-wait while busy: exit %d\n%s", code, outBusy.String())
	}

	second, out2 := startWtd(t, state, "run", "--db", db, "--mongod", mm, "--sample-interval", "0", pb)
	waitFor(t, out2, "waiting for the experiment lock", 10*time.Second)
	if !strings.Contains(out2.String(), "held by run 1 of "+pb) {
		t.Errorf("the waiting run does not name the holder:\n%s", out2.String())
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out1.String())
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("second run: %v\n%s", err, out2.String())
	}
	ctx := context.Background()
	st := openDB(t, db)
	runs, _ := st.ListRuns(ctx, 5)
	if len(runs) != 2 {
		t.Fatalf("runs = %+v (the refused one must not be recorded)", runs)
	}
	a, b := runs[1], runs[0]
	stepsB, _ := st.Steps(ctx, b.ID)
	if a.Status != "ok" || b.Status != "ok" || len(stepsB) != 1 {
		t.Fatalf("runs %+v %+v, steps of the second %+v", a, b, stepsB)
	}
	if !stepsB[0].StartedAt.After(a.EndedAt) {
		t.Errorf("the second run's first step started at %s, before the first run ended at %s", stepsB[0].StartedAt, a.EndedAt)
	}
}

// TestKilledRunLeavesNoDirectory: wtd killed with SIGKILL cannot clean up;
// the next run removes what it left (the servers' data).
func TestKilledRunLeavesNoDirectory(t *testing.T) {
	_, mm := binaries(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local m = mongod.start{}
m:load{ ns = "t.c", docs = 2000, doc_bytes = 500 }
step{ name = "hold", run = function() sleep(60) end }
`)
	cmd, out := startWtd(t, state, "run", "--db", db, "--mongod", mm, "--sample-interval", "0", pb)
	waitFor(t, out, "hold started", 60*time.Second)
	dir := filepath.Join(state, "runs", "1")
	if _, err := os.Stat(filepath.Join(dir, "m1-db")); err != nil {
		t.Fatalf("no server data in the run directory: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for _, pid := range serverPIDs(out.String()) { // the server dies with wtd
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil && !zombie(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed run's directory is already gone: %v", err)
	}
	next, out2 := startWtd(t, state, "run", "--db", db, "--mongod", mm, writePlaybook(t, "log('next')\n"))
	if err := next.Wait(); err != nil {
		t.Fatalf("next run: %v\n%s", err, out2.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("stale run directory %s still there (%v)", dir, err)
	}
	if !strings.Contains(out2.String(), "removed 1 run directories left by wtd processes that ended: "+dir) {
		t.Errorf("the next run does not say what it removed:\n%s", out2.String())
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "runs")); len(entries) != 0 {
		t.Errorf("run directories left: %v", entries)
	}
}

// TestPlaybookFilesAreKept: files a playbook writes in its run directory
// are kept with the run, listed by show and written out by artifacts.
func TestPlaybookFilesAreKept(t *testing.T) {
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local f = io.open("summary.csv", "w")
f:write("size,ops\n0.25,7662\n")
f:close()
`)
	res := runCLI(t, map[string]string{"WTD_STATE_DIR": state}, "run", "--db", db, pb)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	show := runCLI(t, nil, "show", "--db", db, "1")
	if !strings.Contains(show.stdout, "files:     summary.csv, 19 bytes") {
		t.Errorf("show does not list the file:\n%s", show.stdout)
	}
	outDir := t.TempDir()
	res = runCLI(t, nil, "artifacts", "--db", db, "1", "-o", outDir)
	if res.code != 0 {
		t.Fatalf("artifacts: exit %d\n%s", res.code, res.stderr)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "summary.csv"))
	if err != nil || string(b) != "size,ops\n0.25,7662\n" {
		t.Errorf("written out: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "runs")); len(entries) != 0 {
		t.Errorf("run directory not removed after its files were kept: %v", entries)
	}
}

// openDB opens a results database for a test's checks; it is closed when
// the test ends.
func openDB(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}
