package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
	"wtd/schedule"
)

// stuckPlaybook changes a parameter on an attached server, then keeps one
// Go call busy for longer than any test (gopher-lua's pattern matcher).
const stuckPlaybook = `
local m = mongod.connect{ uri = %q }
m:set_parameter("ttlMonitorEnabled", true)
print(string.find(string.rep("a", 2000), ".-.-.-.-.-.-.-b"))
`

// TestStuckRunsAreEnded: a run stuck in a Go call is ended by its
// schedule's timeout (recorded aborted, "timeout 3s") and by an abort
// through the API even when its process does not answer SIGTERM (stopped:
// it is killed, what it changed on the server is put back by the daemon
// and the run is recorded aborted "aborted through the API"); after each,
// the next fire runs instead of being skipped as "still running".
func TestStuckRunsAreEnded(t *testing.T) {
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
	dir, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "stuck.lua"), []byte(fmt.Sprintf(stuckPlaybook, srv.URI)), 0o644)
	os.WriteFile(filepath.Join(dir, "quick.lua"), []byte("log('quick')\n"), 0o644)
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfg := filepath.Join(dir, "wtd.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: %s
db: wtd.db
sample_interval: 0s
schedules:
  - name: stuck
    cron: "@yearly"
    playbook: stuck.lua
    timeout: 3s
  - name: stuck-long
    cron: "@yearly"
    playbook: stuck.lua
  - name: quick
    cron: "@yearly"
    playbook: quick.lua
`, listen)), 0o644)
	signals, done, logText := startDaemonIn(t, cfg, state)
	api := "http://" + listen
	ttl := func() any {
		v, err := schedule.GetParameter(context.Background(), srv.URI, "ttlMonitorEnabled")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	waitAPI(t, api, logText)
	db := filepath.Join(dir, "wtd.db")

	// The timeout ends the stuck run.
	start := time.Now()
	id := fire(t, api, "stuck")
	run := waitEnd(t, db, id, 30*time.Second, logText)
	t.Logf("run %d: %s %q after %s", id, run.Status, run.Reason, time.Since(start).Round(time.Millisecond))
	if run.Status != store.StatusAborted || !strings.Contains(run.Reason, "timeout 3s") {
		t.Errorf("run %d: %s %q, want aborted by the timeout 3s", id, run.Status, run.Reason)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the run with a 3 s timeout ended after %s", took)
	}
	if ttl() != false {
		t.Errorf("ttlMonitorEnabled = %v after the run, want it put back to false", ttl())
	}
	quick := fire(t, api, "quick")
	if r := waitEnd(t, db, quick, 30*time.Second, logText); r.Status != store.StatusOK {
		t.Errorf("quick after the timeout: %+v", r)
	}

	// A process that does not answer SIGTERM is killed after the grace.
	id = fire(t, api, "stuck-long")
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0 || ttl() != true; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run %d did not change the parameter within 30 s:\n%s", id, logText())
		}
		if h := hostctl.ReadLockHolder(hostctl.LockPath(state)); h.RunID == id && h.PID != os.Getpid() {
			pid = h.PID
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	resp, err := http.Post(fmt.Sprintf("%s/api/v1/runs/%d/abort", api, id), "", nil)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("abort: %v %v", resp, err)
	}
	resp.Body.Close()
	aborted := time.Now()
	run = waitEnd(t, db, id, 40*time.Second, logText)
	t.Logf("run %d: %s %q, %s after the abort", id, run.Status, run.Reason, time.Since(aborted).Round(time.Millisecond))
	if run.Status != store.StatusAborted || !strings.Contains(run.Reason, "aborted through the API") || !strings.Contains(run.Reason, "killed") {
		t.Errorf("run %d: %s %q, want aborted through the API, killed", id, run.Status, run.Reason)
	}
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		t.Errorf("wtd run %d still exists", pid)
	}
	if ttl() != false {
		t.Errorf("ttlMonitorEnabled = %v after the killed run, want it put back to false by the daemon", ttl())
	}
	quick = fire(t, api, "quick")
	if r := waitEnd(t, db, quick, 30*time.Second, logText); r.Status != store.StatusOK {
		t.Errorf("quick after the kill: %+v", r)
	}

	signals <- syscall.SIGTERM
	if testing.Verbose() {
		defer func() { t.Log(logText()) }()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the daemon did not stop within 30 s:\n%s", logText())
	}
	if strings.Contains(logText(), "still running") {
		t.Errorf("a fire was skipped as still running:\n%s", logText())
	}
}

// waitAPI waits until the daemon answers.
func waitAPI(t *testing.T, api string, logText func() string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(api + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's API did not answer within 30 s:\n%s", logText())
		}
	}
}

// fire fires schedule name through the API and returns the run's id.
func fire(t *testing.T, api, name string) int64 {
	t.Helper()
	resp, err := http.Post(api+"/api/v1/schedules/"+name+"/run", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		RunID int64 `json:"run_id"`
		Error string
	}
	json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusAccepted || body.RunID == 0 {
		t.Fatalf("fire %s: %d %+v", name, resp.StatusCode, body)
	}
	return body.RunID
}

// waitEnd polls db until run id has ended and the daemon has seen it end,
// and returns it.
func waitEnd(t *testing.T, db string, id int64, within time.Duration, logText func() string) store.Run {
	t.Helper()
	st, err := store.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		r, err := st.GetRun(context.Background(), id)
		if err == nil && !r.EndedAt.IsZero() && strings.Contains(logText(), fmt.Sprintf(" run=%d status=", id)) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d has not ended within %s (%v):\n%s", id, within, err, logText())
		}
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
