package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

// runsJSON reads wtd runs --json of db.
func runsJSON(t *testing.T, db string, args ...string) []struct {
	ID     int64
	Status string
	Push   *struct {
		Waiting   bool
		Attempts  int
		LastError *string `json:"last_error"`
		Dest      *string
	}
} {
	t.Helper()
	r := runCLI(t, nil, append([]string{"--db", db, "runs", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("wtd runs --json: %d\n%s", r.code, r.stderr)
	}
	var out []struct {
		ID     int64
		Status string
		Push   *struct {
			Waiting   bool
			Attempts  int
			LastError *string `json:"last_error"`
			Dest      *string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("wtd runs --json: %v\n%s", err, r.stdout)
	}
	return out
}

// fleetRuns reads wtd runs --results URI --json.
func fleetRuns(t *testing.T, uri string, args ...string) []struct {
	HostID string `json:"host_id"`
	Key    string
	Steps  int
	Run    struct {
		ID      int64
		Status  string
		Trigger string
		Verdict json.RawMessage
	}
} {
	t.Helper()
	r := runCLI(t, nil, append([]string{"runs", "--results", uri, "--results-db", "fleet", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("wtd runs --results: %d\n%s", r.code, r.stderr)
	}
	var out []struct {
		HostID string `json:"host_id"`
		Key    string
		Steps  int
		Run    struct {
			ID      int64
			Status  string
			Trigger string
			Verdict json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("wtd runs --results --json: %v\n%s", err, r.stdout)
	}
	return out
}

// TestTwoHostsPushToTheResultsStore: host A is a daemon with results: in
// its config, whose run fired through the API is pushed when it ends
// (with its verdict); host B is wtd run with wtd push. wtd runs
// --results lists both hosts' runs, --host one; a run whose push failed
// (the results server down) waits in the outbox, shown by wtd runs and
// --waiting, and goes with the next wtd push; pushing again writes nothing
// new.
func TestTwoHostsPushToTheResultsStore(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	results := testbin.StartMinimongod(t, 0)
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")

	// Host A: the daemon.
	dirA := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfgPath := daemonConfig(t, dirA, listen, mm, srv.URI)
	appendConfig(t, cfgPath, fmt.Sprintf("results:\n  uri: %s\n  database: fleet\n", results.URI))
	_, out := startWtd(t, t.TempDir(), "daemon", "--config", cfgPath)
	waitFor(t, out, `"msg":"daemon start"`, 30*time.Second)
	api := apiClient{t: t, base: "http://" + listen, token: "t0ken"}
	var fired struct {
		RunID int64 `json:"run_id"`
	}
	api.want(202, "POST", "/api/v1/schedules/quick/run", &fired)
	api.waitRun(fired.RunID, 60*time.Second)
	dbA := filepath.Join(dirA, "wtd.db")
	deadline := time.Now().Add(30 * time.Second)
	for {
		runs := runsJSON(t, dbA)
		if len(runs) == 1 && runs[0].Push != nil && !runs[0].Push.Waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host A's run not pushed within 30 s: %+v\n%s", runs, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitFor(t, out, `"msg":"run pushed"`, 5*time.Second)
	if body := api.want(200, "GET", "/", nil); !strings.Contains(body, "<th title=\"pushed to the central results store\">pushed</th>") ||
		!strings.Contains(body, " to "+results.URI+" (database fleet)\">yes</td>") {
		t.Errorf("the dashboard's runs list does not show the run pushed:\n%s", body)
	}

	// Host B: wtd run, then wtd push.
	dbB := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, quickPlaybook)
	if r := runCLI(t, nil, "--db", dbB, "run", "--mongod", mm, "--sample-interval", "200ms", pb); r.code != 0 {
		t.Fatalf("wtd run: %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dbB, "push", "--results", results.URI, "--results-db", "fleet"); r.code != 0 || !strings.Contains(r.stdout, "nothing to push") {
		t.Errorf("wtd push with an empty outbox: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dbB, "runs"); strings.Contains(r.stdout, "PUSHED") || r.code != 0 {
		t.Errorf("wtd runs before any push shows a pushed column:\n%s", r.stdout)
	}
	r := runCLI(t, nil, "--db", dbB, "push", "--all", "--results", results.URI, "--results-db", "fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "run 1: pushed to "+results.URI+" (database fleet)") {
		t.Fatalf("wtd push --all: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dbB, "runs"); !strings.Contains(r.stdout, "PUSHED") || !strings.Contains(r.stdout, " yes ") {
		t.Errorf("wtd runs after the push:\n%s", r.stdout)
	}

	all := fleetRuns(t, results.URI)
	if len(all) != 2 || all[0].HostID == all[1].HostID || all[0].Steps != 2 || all[1].Steps != 2 {
		t.Fatalf("wtd runs --results: %+v, want a run of each host with its 2 steps", all)
	}
	var hostB string
	for _, run := range all {
		if run.Run.Trigger == "api quick" {
			if len(run.Run.Verdict) == 0 || string(run.Run.Verdict) == "null" {
				t.Errorf("host A's run in the results store has no verdict: %+v", run)
			}
		} else {
			hostB = run.HostID
		}
	}
	if one := fleetRuns(t, results.URI, "--host", hostB); len(one) != 1 || one[0].Key != hostB+":1" {
		t.Errorf("wtd runs --results --host %s: %+v", hostB, one)
	}
	if none := fleetRuns(t, results.URI, "--status", "failed"); len(none) != 0 {
		t.Errorf("wtd runs --results --status failed: %+v, want none", none)
	}
	if later := fleetRuns(t, results.URI, "--since", "1s"); len(later) != 0 {
		t.Errorf("wtd runs --results --since 1s: %+v, want none", later)
	}
	if both := fleetRuns(t, results.URI, "--since", "1h", "--status", "ok", "--playbook", "pb"); len(both) != 1 {
		t.Errorf("wtd runs --results --since 1h --status ok --playbook pb: %+v, want host B's run", both)
	}
	// The daemon's fleet page: both hosts, each playbook's last run.
	body := api.want(200, "GET", "/fleet", nil)
	hostA := all[0].HostID
	if hostA == hostB {
		hostA = all[1].HostID
	}
	if !strings.Contains(body, "2 hosts in "+results.URI+" (database fleet)") || strings.Count(body, `<tr class="fleet-run">`) != 2 ||
		!strings.Contains(body, "<td><code>"+hostA+`</code></td><td><a href="/fleet/history?playbook=quick" title="its history across hosts">quick</a></td><td><code>`+hostA+":1</code></td>") ||
		!strings.Contains(body, "<td><code>"+hostB+`</code></td><td><a href="/fleet/history?playbook=pb" title="its history across hosts">pb</a></td><td><code>`+hostB+":1</code></td>") ||
		!strings.Contains(body, ">no baseline</span>") {
		t.Errorf("the fleet page:\n%s", body)
	}
	// wtd show of a run of the results store is its host's, but for the
	// host's outbox.
	central := runCLI(t, nil, "show", hostB+":1", "--results", results.URI, "--results-db", "fleet", "--json")
	local := runCLI(t, nil, "--db", dbB, "show", "1", "--json")
	var cv, lv map[string]any
	if err := json.Unmarshal([]byte(central.stdout), &cv); err != nil {
		t.Fatalf("wtd show --results --json: %v\n%s%s", err, central.stdout, central.stderr)
	}
	if err := json.Unmarshal([]byte(local.stdout), &lv); err != nil {
		t.Fatal(err)
	}
	lv["run"].(map[string]any)["push"] = nil
	if d := cmp.Diff(lv, cv); d != "" {
		t.Errorf("wtd show %s:1 --results --json differs from wtd show 1 on host B (-host +store):\n%s", hostB, d)
	}
	if r := runCLI(t, nil, "show", hostB+":1", "--results", results.URI, "--results-db", "fleet"); r.code != 0 ||
		!strings.HasPrefix(r.stdout, "run "+hostB+":1  ok  ") || !strings.Contains(r.stdout, "    2  reads ") {
		t.Errorf("wtd show %s:1 --results:\n%s%s", hostB, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "show", hostB+":9", "--results", results.URI, "--results-db", "fleet"); r.code != 2 || !strings.Contains(r.stderr, "no such run in the results store") {
		t.Errorf("wtd show of a run the store lacks: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "runs", "--results", results.URI, "--results-db", "fleet"); r.code != 0 || !strings.Contains(r.stdout, hostB+":1") {
		t.Errorf("wtd runs --results:\n%s%s", r.stdout, r.stderr)
	}

	// Pushed again: nothing new.
	r = runCLI(t, nil, "--db", dbB, "push", "1", "--results", results.URI, "--results-db", "fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "(0 new), 0 of ") {
		t.Errorf("wtd push of a pushed run: %d %q %s", r.code, r.stdout, r.stderr)
	}

	// The results server down: the run waits.
	if r := runCLI(t, nil, "--db", dbB, "run", "--mongod", mm, "--sample-interval", "200ms", pb); r.code != 0 {
		t.Fatalf("wtd run: %d\n%s", r.code, r.stderr)
	}
	down := fmt.Sprintf("mongodb://127.0.0.1:%d/?serverSelectionTimeoutMS=500", testbin.FreePort(t))
	r = runCLI(t, nil, "--db", dbB, "push", "2", "--results", down)
	if r.code != 1 || !strings.Contains(r.stdout, "run 2: not pushed: ") {
		t.Fatalf("wtd push to a server that is down: %d %q %s", r.code, r.stdout, r.stderr)
	}
	runs := runsJSON(t, dbB, "--waiting")
	if len(runs) != 1 || runs[0].ID != 2 || runs[0].Push == nil || !runs[0].Push.Waiting || runs[0].Push.Attempts != 1 || runs[0].Push.LastError == nil {
		t.Fatalf("wtd runs --waiting --json: %+v", runs)
	}
	if r := runCLI(t, nil, "--db", dbB, "runs"); !strings.Contains(r.stdout, "waiting (1 failed)") {
		t.Errorf("wtd runs with a run waiting:\n%s", r.stdout)
	}
	if r := runCLI(t, nil, "--db", dbB, "show", "2"); !strings.Contains(r.stdout, "  pushed:    waiting in the outbox: 1 attempt failed, the last with ") {
		t.Errorf("wtd show of a run waiting:\n%s", r.stdout)
	}
	if r := runCLI(t, nil, "--db", dbB, "show", "1"); !strings.Contains(r.stdout, " to "+results.URI+" (database fleet)\n") {
		t.Errorf("wtd show of a pushed run:\n%s", r.stdout)
	}
	r = runCLI(t, nil, "--db", dbB, "push", "--results", results.URI, "--results-db", "fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "run 2: pushed") || strings.Contains(r.stdout, "run 1:") {
		t.Errorf("wtd push of the outbox: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if runs := runsJSON(t, dbB, "--waiting"); len(runs) != 0 {
		t.Errorf("waiting after the push: %+v", runs)
	}
	if all := fleetRuns(t, results.URI); len(all) != 3 {
		t.Errorf("results store after host B's second run: %d runs, want 3", len(all))
	}
}

// TestSilentResultsStoreDelaysNothing: with a results store that takes
// connections and never answers, a run the daemon fires ends as usual, the
// next fire right after it starts at once, each run waits in the outbox
// with the timeout as its error, and SIGTERM stops the daemon within its
// budget though a push is stuck.
func TestSilentResultsStoreDelaysNothing(t *testing.T) {
	_, mm := binaries(t)
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfgPath := daemonConfig(t, dir, listen, mm, srv.URI)
	appendConfig(t, cfgPath, fmt.Sprintf("results:\n  uri: mongodb://%s/\n", silent.Addr()))
	daemon, out := startWtd(t, t.TempDir(), "daemon", "--config", cfgPath)
	waitFor(t, out, `"msg":"daemon start"`, 30*time.Second)
	api := apiClient{t: t, base: "http://" + listen, token: "t0ken"}
	var ids []int64
	var gaps []time.Duration
	for range 2 {
		var fired struct {
			RunID int64 `json:"run_id"`
		}
		asked := time.Now()
		api.want(202, "POST", "/api/v1/schedules/quick/run", &fired)
		gaps = append(gaps, time.Since(asked))
		if run := api.waitRun(fired.RunID, 60*time.Second); run.Run.Status != "ok" {
			t.Fatalf("run %d: %+v", fired.RunID, run.Run)
		}
		ids = append(ids, fired.RunID)
	}
	for i, g := range gaps {
		if g > 5*time.Second {
			t.Errorf("fire %d took %s to start its run with the results store silent", i+1, g)
		}
	}
	db := filepath.Join(dir, "wtd.db")
	deadline := time.Now().Add(40 * time.Second)
	for {
		runs := runsJSON(t, db)
		if len(runs) == 2 && runs[1].Push != nil && runs[1].Push.Attempts >= 1 && runs[1].Push.Waiting && runs[1].Push.LastError != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d's push did not fail within 40 s: %+v\n%s", ids[0], runs, out.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
	stopped := time.Now()
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		t.Fatalf("daemon after SIGTERM: %v\n%s", err, out.String())
	}
	if d := time.Since(stopped); d > 15*time.Second {
		t.Errorf("the daemon took %s to stop with a push stuck", d)
	}
	for _, r := range runsJSON(t, db) {
		if r.Push == nil || !r.Push.Waiting {
			t.Errorf("run %d after the daemon stopped: %+v, want it waiting in the outbox", r.ID, r.Push)
		}
	}
}

// TestDaemonKilledMidPush: the daemon is SIGKILLed while it pushes a run,
// after the run's frames and before its steps; the run stays in the
// outbox, and the daemon started again pushes it at once, sending only
// what the store lacked: the store holds each document once.
func TestDaemonKilledMidPush(t *testing.T) {
	_, mm := binaries(t)
	results := testbin.StartMinimongod(t, 0)
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
	var daemon atomic.Pointer[exec.Cmd]
	proxy := fakemongod.StartCutProxy(t, fmt.Sprintf("127.0.0.1:%d", results.Port), []byte("/step/1"), func() {
		if d := daemon.Load(); d != nil {
			d.Process.Signal(syscall.SIGKILL)
		}
	})
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	cfgPath := daemonConfig(t, dir, listen, mm, srv.URI)
	appendConfig(t, cfgPath, fmt.Sprintf("results:\n  uri: mongodb://%s/\n  database: fleet\n", proxy.Addr()))
	state := t.TempDir()
	first, out := startWtd(t, state, "daemon", "--config", cfgPath)
	daemon.Store(first)
	waitFor(t, out, `"msg":"daemon start"`, 30*time.Second)
	api := apiClient{t: t, base: "http://" + listen, token: "t0ken"}
	api.want(202, "POST", "/api/v1/schedules/quick/run", nil)
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("the daemon was not killed mid-push within 90 s:\n%s", out.String())
	}
	if !proxy.Cut() {
		t.Fatalf("the daemon ended, but not at the cut:\n%s", out.String())
	}
	db := filepath.Join(dir, "wtd.db")
	runs := runsJSON(t, db)
	if len(runs) != 1 || runs[0].Status != "ok" || runs[0].Push == nil || !runs[0].Push.Waiting {
		t.Fatalf("after the kill: %+v, want run 1 ok and waiting in the outbox", runs)
	}
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(results.URI))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	count := func(coll string) int64 {
		n, err := client.Database("fleet").Collection(coll).CountDocuments(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	frames := count("frames")
	if frames == 0 || count("runs") != 0 || count("steps") != 0 {
		t.Fatalf("results store after the kill: %d frames, %d runs, %d steps; want frames only", frames, count("runs"), count("steps"))
	}

	second, out2 := startWtd(t, state, "daemon", "--config", cfgPath)
	daemon.Store(second)
	waitFor(t, out2, `"msg":"run pushed"`, 60*time.Second)
	var pushed struct {
		Docs int `json:"docs"`
		New  int `json:"new"`
	}
	for _, line := range strings.Split(out2.String(), "\n") {
		if strings.Contains(line, `"msg":"run pushed"`) {
			json.Unmarshal([]byte(line), &pushed)
		}
	}
	if pushed.Docs == 0 || pushed.New != pushed.Docs {
		t.Errorf("the push after the restart: %+v, want every document it sent new (the frames were not sent again)", pushed)
	}
	if runs := runsJSON(t, db); runs[0].Push == nil || runs[0].Push.Waiting {
		t.Errorf("after the restart: %+v, want run 1 pushed", runs[0].Push)
	}
	if n := count("frames"); n != frames || count("runs") != 1 || count("steps") != 2 {
		t.Errorf("results store after the restart: %d frames (%d before), %d runs, %d steps; want each once", n, frames, count("runs"), count("steps"))
	}
	second.Process.Signal(syscall.SIGTERM)
	second.Wait()
}

// appendConfig adds text (YAML keys) at the end of the daemon config at path.
func appendConfig(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
