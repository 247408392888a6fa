package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/internal/testsvc"
)

// servicePlaybook restarts a service with a smaller cache, changes a
// runtime parameter, then ends as mode says: ok, fail (the step errs), or
// hold (it sleeps until a signal).
func servicePlaybook(svc *testsvc.Service) string {
	return fmt.Sprintf(`
local p = params{ mode = "ok" }
local m = mongod.service{ unit = %q, config = %q, uri = %q, service_manager = %s, timeout = 60 }
step{ name = "shrink", cacheSizeGB = 0.25, run = function()
  m:restart{ cacheSizeGB = 0.25 }
  m:set_parameter("ttlMonitorSleepSecs", 11)
  log("restarted with a smaller cache")
  if p.mode == "fail" then error("the step fails on purpose") end
  if p.mode == "hold" then sleep(120) end
end }
`, testsvc.Unit, svc.Config, svc.URI, svc.ManagerArg())
}

// TestServiceIsPutBackHoweverTheRunEnds: a service's config file is back
// byte for byte, and the server runs with its original cache and
// parameters, after a run that ends ok, one whose step fails, one
// interrupted (SIGINT), and one killed (SIGKILL) followed by any wtd
// command.
func TestServiceIsPutBackHoweverTheRunEnds(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"ok", "fail", "sigint", "sigkill"} {
		t.Run(mode, func(t *testing.T) { testServicePutBack(t, mode) })
	}
}

func testServicePutBack(t *testing.T, mode string) {
	svc := testsvc.Start(t, testbin.Minimongod(t))
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, servicePlaybook(svc))
	pmode := map[string]string{"ok": "ok", "fail": "fail", "sigint": "hold", "sigkill": "hold"}[mode]
	cmd, out := startWtd(t, state, "run", "--db", db, "--allow-service", testsvc.Unit, "--sample-interval", "0", pb, "-p", "mode="+pmode)
	waitFor(t, out, "restarted with a smaller cache", 90*time.Second)
	if pmode == "hold" {
		if got := svc.CacheBytes(t); got != testsvc.GB(0.25) {
			t.Errorf("cache during the run = %.0f, want %.0f", got, testsvc.GB(0.25))
		}
		if !strings.Contains(svc.ConfigNow(t), "cacheSizeGB: 0.25") {
			t.Errorf("config during the run:\n%s", svc.ConfigNow(t))
		}
		sig := map[string]syscall.Signal{"sigint": syscall.SIGINT, "sigkill": syscall.SIGKILL}[mode]
		cmd.Process.Signal(sig)
	}
	cmd.Wait()
	want := map[string]int{"ok": 0, "fail": 1, "sigint": 130, "sigkill": -1}[mode]
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Fatalf("exit %d, want %d\n%s", code, want, out.String())
	}
	if mode == "sigkill" {
		if svc.ConfigNow(t) == string(svc.Original) {
			t.Fatal("the config was put back though wtd was killed")
		}
		next := exec.Command(testbin.Wtd(t), "runs", "--db", db)
		next.Env = append(next.Environ(), "WTD_STATE_DIR="+state)
		b, err := next.CombinedOutput()
		if err != nil {
			t.Fatalf("wtd runs after the kill: %v\n%s", err, b)
		}
		if !strings.Contains(string(b), "run 1 ended without putting back what it changed") {
			t.Errorf("wtd runs does not say it puts back the killed run's changes:\n%s", b)
		}
	}
	if got := svc.ConfigNow(t); got != string(svc.Original) {
		t.Errorf("config after the run is not the original:\n%s\nwtd said:\n%s", got, out.String())
	}
	if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
		t.Errorf("cache after the run = %.0f, want the original %.0f", got, testsvc.GB(0.5))
	}
	if got := fmt.Sprint(svc.Parameter(t, "ttlMonitorSleepSecs")); got != "60" {
		t.Errorf("ttlMonitorSleepSecs after the run = %s, want 60", got)
	}
	show := exec.Command(testbin.Wtd(t), "show", "1", "--db", db)
	show.Env = append(show.Environ(), "WTD_STATE_DIR="+state)
	b, err := show.CombinedOutput()
	if err != nil {
		t.Fatalf("wtd show: %v\n%s", err, b)
	}
	text := string(b)
	if !strings.Contains(text, "changed:") || strings.Count(text, ": restored ") != 2 || strings.Contains(text, "NOT restored") {
		t.Errorf("wtd show does not say both changes were put back:\n%s", text)
	}
	if !strings.Contains(text, "setParameter ttlMonitorSleepSecs=11 (was 60)") || !strings.Contains(text, "config "+svc.Config+": storage.wiredTiger.engineConfig.cacheSizeGB=0.25") {
		t.Errorf("wtd show does not say what was changed and the value before:\n%s", text)
	}
	if mode == "ok" {
		t.Logf("wtd show:\n%s", text)
	}
}

// TestServiceNeedsAllowService: a playbook alone cannot restart a service.
func TestServiceNeedsAllowService(t *testing.T) {
	pb := writePlaybook(t, `mongod.service{ unit = "mongod", config = "/etc/mongod.conf", uri = "mongodb://127.0.0.1:27017" }`)
	res := runCLI(t, nil, "run", "--db", filepath.Join(t.TempDir(), "wtd.db"), pb)
	if res.code != 1 || !strings.Contains(res.stderr, "--allow-service mongod") {
		t.Errorf("exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

// TestServiceConfigThatBreaksTheServerIsAFailedStep: a restart with a
// config the server cannot start with is rolled back (the original file,
// the server running with it) and its step is recorded failed with the
// server's log lines.
func TestServiceConfigThatBreaksTheServerIsAFailedStep(t *testing.T) {
	t.Parallel()
	svc := testsvc.Start(t, testbin.Minimongod(t))
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, fmt.Sprintf(`
local m = mongod.service{ unit = %q, config = %q, uri = %q, service_manager = %s, timeout = 8 }
step{ name = "bad knob", run = function() m:restart{ engineConfig = "no_such_wiredtiger_key=1" } end }
`, testsvc.Unit, svc.Config, svc.URI, svc.ManagerArg()))
	res := runCLI(t, nil, "run", "--db", db, "--allow-service", testsvc.Unit, "--sample-interval", "0", pb)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.code, res.stderr)
	}
	if got := svc.ConfigNow(t); got != string(svc.Original) {
		t.Errorf("config after the rollback is not the original:\n%s", got)
	}
	if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
		t.Errorf("cache after the rollback = %.0f, want %.0f", got, testsvc.GB(0.5))
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	steps, err := st.Steps(ctx, 1)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps = %+v, %v", steps, err)
	}
	e := steps[0].Error
	if steps[0].Status != "failed" || !strings.Contains(e, "did not answer") || !strings.Contains(e, "original config was put back") ||
		!strings.Contains(e, "last lines of "+svc.LogPath) || !strings.Contains(e, "unknown configuration key: 'no_such_wiredtiger_key'") {
		t.Errorf("step: %s, error:\n%s", steps[0].Status, e)
	}
	if changes, err := st.Changes(ctx, 1); err != nil || len(changes) != 1 || changes[0].State != store.ChangeRestored {
		t.Errorf("changes = %+v, %v; want the one change restored", changes, err)
	}
}

// TestRestoreCommand: wtd restore refuses a run still going on and says
// when a run changed nothing.
func TestRestoreCommand(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "wtd.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	done, _ := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "a.lua", Playbook: "--"})
	st.FinishRun(ctx, done, store.StatusOK, "", time.Now())
	running, _ := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "b.lua", Playbook: "--"})
	st.Close(ctx)
	res := runCLI(t, nil, "restore", "--db", db, fmt.Sprint(done))
	if res.code != 0 || !strings.Contains(res.stdout, "changed nothing") {
		t.Errorf("restore of a run without changes: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "restore", "--db", db, fmt.Sprint(running))
	if res.code != 2 || !strings.Contains(res.stderr, "still going on") {
		t.Errorf("restore of a run going on: exit %d\n%s", res.code, res.stderr)
	}
}
