package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
	"wtd/schedule"
)

const quickPlaybook = `
local p = params{ docs = 2000 }
local m = mongod.start{}
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 500 } end }
step{ name = "reads", run = function() return m:workload{ ns = "t.c", ops = 2000, mix = { read = 1 } } end }
sleep(0.5)
`

const slowPlaybook = `
local m = mongod.start{}
step{ name = "wait", run = function() sleep(60) end }
`

// daemonConfig writes a config with a quick and a slow schedule (never
// due during the test) and a window open now on srv, and a token file.
func daemonConfig(t *testing.T, dir, listen, mm, serverURI string) string {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "quick.lua"), []byte(quickPlaybook), 0o644)
	os.WriteFile(filepath.Join(dir, "slow.lua"), []byte(slowPlaybook), 0o644)
	os.WriteFile(filepath.Join(dir, "token"), []byte("t0ken\n"), 0o600)
	now := time.Now().UTC()
	cfg := fmt.Sprintf(`listen: %s
db: wtd.db
mongod: %s
token_file: token
sample_interval: 200ms
schedules:
  - name: quick
    cron: "@yearly"
    playbook: quick.lua
    params: { docs: 3000 }
  - name: slow
    cron: "@yearly"
    playbook: slow.lua
    timeout: 5m
windows:
  - name: offpeak
    cron: "CRON_TZ=UTC %d %d * * *"
    duration: 10m
    server: %s
    open:  { setParameter: { ttlMonitorEnabled: true } }
    close: { setParameter: { ttlMonitorEnabled: false } }
`, listen, mm, now.Minute(), now.Hour(), serverURI)
	path := filepath.Join(dir, "wtd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiClient calls the daemon's API.
type apiClient struct {
	t     *testing.T
	base  string
	token string
}

// call sends a request and decodes the JSON answer into out (if not nil);
// it returns the status and the raw body.
func (c apiClient) call(method, path string, out any) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, out); err != nil {
			c.t.Fatalf("%s %s: %v\n%s", method, path, err, body)
		}
	}
	return resp.StatusCode, string(body)
}

// want calls and fails the test unless the status is code.
func (c apiClient) want(code int, method, path string, out any) string {
	c.t.Helper()
	got, body := c.call(method, path, out)
	if got != code {
		c.t.Fatalf("%s %s: %d, want %d\n%s", method, path, got, code, body)
	}
	return body
}

type runReply struct {
	Run struct {
		ID      int64
		Status  string
		Reason  string
		Trigger string
		Params  map[string]any
	}
	Steps []struct {
		Name       string
		Status     string
		Result     json.RawMessage
		Provenance json.RawMessage
	}
	Servers []struct {
		Name    string
		Started bool
		PID     int
	}
}

// waitRun polls GET /api/v1/runs/{id} until the run's status is not
// running, then GET /healthz until the daemon no longer names it as its
// run going on: the run's record ends before its process exits, and the
// daemon fires nothing else until the process is gone.
func (c apiClient) waitRun(id int64, within time.Duration) runReply {
	c.t.Helper()
	deadline := time.Now().Add(within)
	var r runReply
	for {
		r = runReply{}
		c.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d", id), &r)
		if r.Run.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %d still running after %s", id, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		var h struct {
			Running *struct {
				RunID int64 `json:"run_id"`
			}
		}
		c.want(200, "GET", "/healthz", &h)
		if h.Running == nil || h.Running.RunID != id {
			return r
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("run %d recorded %s but the daemon still runs it after %s", id, r.Run.Status, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDaemonEndToEnd starts the wtd daemon binary with a config and calls
// every endpoint: a schedule fired through the API runs and is read back
// through GET /api/v1/runs/{id}; a second fire while a run goes is a 409
// naming it; abort, filters, samples, errors, metrics; the window opened at
// start; `wtd schedules`; a bad SIGHUP keeps the daemon; SIGTERM closes the
// window and exits 0.
func TestDaemonEndToEnd(t *testing.T) {
	_, mm := binaries(t)
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfgPath := daemonConfig(t, dir, listen, mm, srv.URI)
	state := t.TempDir()
	cmd, out := startWtd(t, state, "daemon", "--config", cfgPath)
	waitFor(t, out, `"msg":"daemon start"`, 30*time.Second)
	api := apiClient{t: t, base: "http://" + listen, token: "t0ken"}
	ttl := func() any {
		v, err := schedule.GetParameter(context.Background(), srv.URI, "ttlMonitorEnabled")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	var health map[string]any
	api.want(200, "GET", "/healthz", &health)
	if health["status"] != "ok" {
		t.Errorf("healthz: %v", health)
	}
	if body := api.want(200, "GET", "/", nil); !strings.Contains(body, "/api/v1/schedules") {
		t.Errorf("index page: %s", body)
	}

	// Fire quick through the API and read the run back.
	noToken := apiClient{t: t, base: api.base}
	noToken.want(401, "POST", "/api/v1/schedules/quick/run", nil)
	var fired struct {
		RunID   int64 `json:"run_id"`
		Trigger string
	}
	api.want(202, "POST", "/api/v1/schedules/quick/run", &fired)
	if fired.RunID == 0 || fired.Trigger != "api quick" {
		t.Fatalf("fire: %+v", fired)
	}
	run := api.waitRun(fired.RunID, 60*time.Second)
	if run.Run.Status != "ok" || run.Run.Trigger != "api quick" || run.Run.Params["docs"] != float64(3000) ||
		len(run.Steps) != 2 || run.Steps[1].Name != "reads" || !strings.Contains(string(run.Steps[1].Result), `"p99_micros"`) ||
		!strings.Contains(string(run.Steps[1].Provenance), `"verdict"`) || len(run.Servers) != 1 || !run.Servers[0].Started {
		t.Fatalf("run %d: %+v", fired.RunID, run)
	}

	// The run fired through the API gets its verdict (the first of its
	// playbook and parameters: no baseline), and the dashboard's pages
	// show the run, its report and the schedules.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r struct {
			Run struct{ Verdict *struct{ Verdict string } }
		}
		api.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d", run.Run.ID), &r)
		if r.Run.Verdict != nil {
			if r.Run.Verdict.Verdict != "no baseline" {
				t.Errorf("verdict of run %d: %q, want no baseline", run.Run.ID, r.Run.Verdict.Verdict)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d: no verdict recorded within 20 s", run.Run.ID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if body := api.want(200, "GET", "/?playbook=quick", nil); !strings.Contains(body, fmt.Sprintf(`href="/runs/%d"`, run.Run.ID)) ||
		!strings.Contains(body, "<td>api quick</td>") || !strings.Contains(body, "no baseline") {
		t.Errorf("dashboard's runs list:\n%s", body)
	}
	if body := api.want(200, "GET", fmt.Sprintf("/runs/%d", run.Run.ID), nil); !strings.Contains(body, `id="wtd-data"`) ||
		!strings.Contains(body, "regression verdict: ") {
		t.Errorf("dashboard's run page:\n%.2000s", body)
	}
	if body := api.want(200, "GET", "/schedules", nil); !strings.Contains(body, `<tr class="schedule"><td>quick</td>`) ||
		!strings.Contains(body, `<tr class="window"><td>offpeak</td>`) || !strings.Contains(body, "open until") {
		t.Errorf("dashboard's schedules page:\n%s", body)
	}

	// Samples: sources, metric names, one series as arrays.
	var sources struct{ Sources []string }
	api.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d/samples", run.Run.ID), &sources)
	if !strings.Contains(strings.Join(sources.Sources, ","), "server:m1") {
		t.Fatalf("sources: %v", sources)
	}
	var metrics struct{ Metrics []string }
	api.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d/samples?source=server:m1", run.Run.ID), &metrics)
	if len(metrics.Metrics) < 10 {
		t.Errorf("metrics of server:m1: %v", metrics.Metrics)
	}
	var series struct {
		Metric string
		T, V   []float64
	}
	api.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d/samples?source=server:m1&metric=opcounters.query", run.Run.ID), &series)
	if len(series.T) == 0 || len(series.T) != len(series.V) || series.V[len(series.V)-1] < 2000 {
		t.Errorf("series: %+v", series)
	}
	api.want(404, "GET", fmt.Sprintf("/api/v1/runs/%d/samples?source=server:m9", run.Run.ID), nil)

	// A run going: a second fire is a 409 naming it; abort ends it.
	var slow struct {
		RunID int64 `json:"run_id"`
	}
	api.want(202, "POST", "/api/v1/schedules/slow/run", &slow)
	var busy struct {
		Error, Holder string
		RunID         int64 `json:"run_id"`
	}
	api.want(409, "POST", "/api/v1/schedules/quick/run", &busy)
	if busy.RunID != slow.RunID || !strings.Contains(busy.Holder, fmt.Sprintf("run %d", slow.RunID)) {
		t.Errorf("409: %+v", busy)
	}
	var going runReply
	for deadline := time.Now().Add(30 * time.Second); len(going.Steps) == 0 || len(going.Servers) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("run %d has no step going after 30 s: %+v", slow.RunID, going)
		}
		api.want(200, "GET", fmt.Sprintf("/api/v1/runs/%d", slow.RunID), &going)
	}
	// The wtd run the daemon started holds the run's experiment lock, and the
	// run records it: a command of another process leaves it running.
	db := filepath.Join(dir, "wtd.db")
	if res := runCLI(t, nil, "runs", "--db", db); res.code != 0 {
		t.Errorf("wtd runs while the daemon runs: exit %d\n%s", res.code, res.stderr)
	}
	if status, reason, _, _ := recorded(t, db, slow.RunID); status != store.StatusRunning {
		t.Errorf("the daemon's run going on is recorded %s %q by wtd runs", status, reason)
	}
	if r, err := openDB(t, db).GetRun(context.Background(), slow.RunID); err != nil || r.LockPath != hostctl.LockPath(state) {
		t.Errorf("the daemon's run records lock %q (%v), want %s", r.LockPath, err, hostctl.LockPath(state))
	} else if status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.OwnerPID)); !strings.Contains(string(status), fmt.Sprintf("\nPPid:\t%d\n", cmd.Process.Pid)) {
		t.Errorf("the daemon's run records owner pid %d, not a child of the daemon (pid %d):\n%s", r.OwnerPID, cmd.Process.Pid, status)
	}
	noToken.want(401, "POST", fmt.Sprintf("/api/v1/runs/%d/abort", slow.RunID), nil)
	api.want(202, "POST", fmt.Sprintf("/api/v1/runs/%d/abort", slow.RunID), nil)
	aborted := api.waitRun(slow.RunID, 30*time.Second)
	if aborted.Run.Status != "aborted" || !strings.Contains(aborted.Run.Reason, "aborted through the API") {
		t.Errorf("aborted run: %+v", aborted.Run)
	}
	for _, s := range going.Servers {
		if s.PID > 0 && syscall.Kill(s.PID, 0) == nil && !zombie(s.PID) {
			t.Errorf("server %d of the aborted run still running", s.PID)
		}
	}

	// Filters and errors.
	var list struct{ Runs []struct{ ID int64 } }
	api.want(200, "GET", "/api/v1/runs?playbook="+filepath.Join(dir, "quick.lua")+"&status=ok&limit=5", &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != run.Run.ID {
		t.Errorf("runs of quick.lua, ok: %+v", list)
	}
	api.want(200, "GET", "/api/v1/runs?status=aborted", &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != slow.RunID {
		t.Errorf("aborted runs: %+v", list)
	}
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/runs?status=done", 400},
		{"GET", "/api/v1/runs?limit=-1", 400},
		{"GET", "/api/v1/runs/abc", 400},
		{"GET", "/api/v1/runs/999", 404},
		{"POST", "/api/v1/runs/999/abort", 404},
		{"POST", fmt.Sprintf("/api/v1/runs/%d/abort", run.Run.ID), 409},
		{"POST", "/api/v1/schedules/nope/run", 404},
		{"DELETE", "/api/v1/runs", 405},
		{"GET", "/api/v1/nothing", 404},
	} {
		var e struct{ Error string }
		api.want(tc.code, tc.method, tc.path, &e)
		if e.Error == "" {
			t.Errorf("%s %s: no JSON error", tc.method, tc.path)
		}
	}

	// Schedules and windows, the CLI's table, metrics.
	var scheds struct {
		Schedules []struct {
			Name    string
			Next    []time.Time
			LastRun *struct {
				ID     int64
				Status string
			} `json:"last_run"`
			Skips int
		}
		Windows []struct {
			Name string
			Open bool
		}
	}
	api.want(200, "GET", "/api/v1/schedules", &scheds)
	if len(scheds.Schedules) != 2 || scheds.Schedules[0].LastRun == nil || scheds.Schedules[0].LastRun.ID != run.Run.ID ||
		scheds.Schedules[0].Skips != 1 || len(scheds.Schedules[0].Next) != 5 || len(scheds.Windows) != 1 || !scheds.Windows[0].Open {
		t.Errorf("schedules: %+v", scheds)
	}
	if ttl() != true {
		t.Errorf("the window is open but ttlMonitorEnabled = %v", ttl())
	}
	table := runCLI(t, nil, "schedules", "--config", cfgPath)
	if table.code != 0 || !strings.Contains(table.stdout, fmt.Sprintf("quick     @yearly")) || !strings.Contains(table.stdout, "open until") ||
		!regexp.MustCompile(fmt.Sprintf(`\n+quick +@yearly .* %d ok +no baseline +1 `, run.Run.ID)).MatchString(table.stdout) {
		t.Errorf("wtd schedules: %d\n%s%s", table.code, table.stdout, table.stderr)
	}
	// The aborted run's end is recorded by its own process, which the
	// daemon then reaps: wait for that rather than for a time.
	body := api.want(200, "GET", "/metrics", nil)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(body, "wtd_run_in_progress 0") && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		body = api.want(200, "GET", "/metrics", nil)
	}
	for _, want := range []string{`wtd_runs{status="ok"} 1`, `wtd_runs{status="aborted"} 1`, `wtd_schedule_skips_total{schedule="quick"} 1`,
		`wtd_run_duration_seconds_count{schedule="quick",status="ok"} 1`, `wtd_window_open{window="offpeak"} 1`,
		`wtd_window_transitions_total{event="open",window="offpeak"} 1`, `wtd_run_in_progress 0`, `wtd_schedule_last_success_timestamp_seconds{schedule="quick"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}

	// A bad config on SIGHUP is refused; the daemon goes on.
	os.WriteFile(cfgPath, []byte("schedules:\n  - name: x\n    cron: nonsense\n    playbook: quick.lua\n"), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, out, "reload refused", 10*time.Second)
	api.want(200, "GET", "/api/v1/schedules", &scheds)
	if len(scheds.Schedules) != 2 {
		t.Errorf("schedules after a refused reload: %+v", scheds.Schedules)
	}

	// SIGTERM: the window closes, exit 0.
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("daemon after SIGTERM: %v\n%s", err, out.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if ttl() != false {
		t.Errorf("the daemon stopped but ttlMonitorEnabled = %v", ttl())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			t.Errorf("a log line that is not JSON: %s", line)
			break
		}
	}
}

// TestDaemonCheck: --check prints five fire times per schedule and window
// and exits 0; a bad config exits 2 naming the file and line.
func TestDaemonCheck(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "quick.lua"), []byte(quickPlaybook), 0o644)
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte(`schedules:
  - name: nightly
    cron: "CRON_TZ=Europe/Berlin 0 2 * * *"
    playbook: quick.lua
    params: { docs: 100 }
windows:
  - name: offpeak
    cron: "0 1 * * *"
    duration: 4h
    server: mongodb://127.0.0.1:27017
    open:  { setParameter: { ttlMonitorEnabled: true } }
    close: { setParameter: { ttlMonitorEnabled: false } }
`), 0o644)
	res := runCLI(t, nil, "daemon", "--check", "--config", good)
	if res.code != 0 || strings.Count(res.stdout, "\n  20") != 10 || !strings.Contains(res.stdout, "schedule nightly") {
		t.Errorf("check of a good config: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, tc := range []struct{ text, want string }{
		{"schedules:\n  - name: a\n    cron: \"@daily\"\n    playbook: quick.lua\n    params: { dcos: 1 }\n", `unknown parameter "dcos"`},
		{"schedules:\n  - name: a\n    cron: \"@daily\"\n    playbook: missing.lua\n", "bad.yaml:2: schedule a: read playbook"},
		{"listen: 127.0.0.1:1\nlissen: 2\n", `bad.yaml:2: unknown key "lissen"`},
	} {
		bad := filepath.Join(dir, "bad.yaml")
		os.WriteFile(bad, []byte(tc.text), 0o644)
		res := runCLI(t, nil, "daemon", "--check", "--config", bad)
		if res.code != 2 || !strings.Contains(res.stderr, "bad.yaml:2: ") || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("check: %d, want 2 and %q\n%s", res.code, tc.want, res.stderr)
		}
	}
}
