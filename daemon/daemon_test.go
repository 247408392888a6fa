package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// TestSIGTERMMidRunAbortsThePlaybook: a scheduled Lua run that is going
// when SIGTERM comes ends aborted, its server shut down, and the daemon
// returns nil well within 30 s.
func TestSIGTERMMidRunAbortsThePlaybook(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "slow.lua"), []byte(`
local m = mongod.start{}
step{ name = "wait", run = function() sleep(120) end }
`), 0o644)
	cfg := filepath.Join(dir, "wtd.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: 127.0.0.1:%d
db: wtd.db
sample_interval: 0s
schedules:
  - name: slow
    cron: "@every 1s"
    playbook: slow.lua
`, testbin.FreePort(t))), 0o644)
	signals, done, logText := startDaemon(t, cfg)
	db := filepath.Join(dir, "wtd.db")
	var pid int
	deadline := time.Now().Add(60 * time.Second)
	for pid == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no server started by the scheduled run:\n%s", logText())
		}
		time.Sleep(100 * time.Millisecond)
		pid = serverPID(t, db)
	}
	signals <- syscall.SIGTERM
	start := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("the daemon did not return within 40 s of SIGTERM:\n%s", logText())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("server %d still running", pid)
	}
	st, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	runs, _ := st.ListRuns(context.Background(), 0)
	if len(runs) != 1 || runs[0].Status != store.StatusAborted || runs[0].Trigger != "schedule slow" ||
		!strings.Contains(runs[0].Reason, "daemon stopping (terminated)") {
		t.Errorf("runs: %+v", runs)
	}
	steps, _ := st.Steps(context.Background(), runs[0].ID)
	if len(steps) != 1 || steps[0].Status != store.StatusAborted {
		t.Errorf("steps: %+v", steps)
	}
}

// serverPID returns the pid of the first server a run in db recorded (0:
// none yet).
func serverPID(t *testing.T, db string) int {
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	st, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		return 0
	}
	defer st.Close(context.Background())
	runs, _ := st.ListRuns(context.Background(), 1)
	if len(runs) == 0 {
		return 0
	}
	servers, _ := st.Servers(context.Background(), runs[0].ID)
	if len(servers) == 0 {
		return 0
	}
	return servers[0].PID
}
