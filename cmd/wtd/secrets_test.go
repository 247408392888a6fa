package main

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	_ "modernc.org/sqlite"

	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

// uriPassword is the password the URIs of TestURIPasswordsNeverLeak carry:
// letters and digits only, so that no escaping (HTML, JSON, URL) can hide
// it from a plain search.
const uriPassword = "S3cretPa55word"

// secretPlaybook puts its URIs (parameters uri, through a proxy that takes
// the login, and refused, straight to minimongod, which refuses it)
// everywhere a playbook can: a connect that fails, print, io.write, log,
// an attached server with a parameter changed, an index made and a
// command run that quotes the URI (allowed: a change wtd records), a load
// and a workload through the URI, a step name and label, a step's error,
// a file in the run directory, a table title, and the run's own error. Its
// text holds the password too (PASSWORD), in a comment.
const secretPlaybook = `
-- wtd run secret.lua -p uri=mongodb://tuner:PASSWORD@127.0.0.1:27017/?authMechanism=PLAIN
local p = params{ uri = "", refused = "", ns = "t.c" }
local ok, e = pcall(mongod.connect, { uri = p.refused })
assert(not ok, "minimongod took a login it cannot check")
log("refused:", e)
print("print", p.uri)
io.write("io.write ", p.uri, "\n")
log("log", p.uri)
local m = mongod.connect{ uri = p.uri }
log("m.uri", m.uri)
m:set_parameter("ttlMonitorSleepSecs", 61)
m:create_index{ ns = p.ns, key = "a" }
m:command("insert", { insert = "log", documents = { { uri = p.uri } } }, "t")
step{ name = "load " .. p.uri, target = p.uri, run = function()
  return m:load{ ns = p.ns, docs = 300, doc_bytes = 100 }
end }
step{ name = "reads", run = function() return m:workload{ ns = p.ns, ops = 300, mix = { read = 1 } } end }
pcall(step, { name = "fails", run = function() error("step error " .. p.uri) end })
local f = io.open("notes.txt", "w")
f:write("notes ", p.uri, "\n")
f:close()
report.table{ title = "table " .. p.uri }
error("the run ends with " .. p.uri)
`

// output is one piece of what wtd showed: a command's output, a log, a page.
type output struct{ name, text string }

// TestURIPasswordsNeverLeak: a password in a MongoDB URI never reaches the
// results database (any column of any table, the sample frames inflated,
// the files themselves), the output of wtd run (stdout, stderr), the
// daemon's log, the API, the dashboard, the report, wtd show (text and
// --json), runs, artifacts, schedules or daemon --check, nor the results
// URI's: the outbox, wtd push, wtd runs (--results), the central results
// store's documents. The URIs go
// through a login that works (an authenticating proxy in front of
// minimongod) and one that fails, in a run of the CLI and a run and
// windows of the daemon.
func TestURIPasswordsNeverLeak(t *testing.T) {
	t.Parallel()
	wtdBin, mm := binaries(t)
	srv := testbin.StartMinimongod(t, 0)
	direct := fmt.Sprintf("127.0.0.1:%d", srv.Port)
	proxy := fakemongod.StartAuthProxy(t, direct)
	uri := "mongodb://tuner:" + uriPassword + "@" + proxy.Addr() + "/?authMechanism=PLAIN"
	refused := "mongodb://tuner:" + uriPassword + "@" + direct + "/?authSource=admin"
	// The central results store, behind its own login.
	results := testbin.StartMinimongod(t, 0)
	resultsProxy := fakemongod.StartAuthProxy(t, fmt.Sprintf("127.0.0.1:%d", results.Port))
	resultsURI := "mongodb://tuner:" + uriPassword + "@" + resultsProxy.Addr() + "/?authMechanism=PLAIN"
	resultsDown := fmt.Sprintf("mongodb://tuner:%s@127.0.0.1:%d/?authMechanism=PLAIN&serverSelectionTimeoutMS=500", uriPassword, testbin.FreePort(t))
	dir := t.TempDir()
	state, db, pb := filepath.Join(dir, "state"), filepath.Join(dir, "wtd.db"), filepath.Join(dir, "secret.lua")
	if err := os.WriteFile(pb, []byte(strings.ReplaceAll(secretPlaybook, "PASSWORD", uriPassword)), 0o644); err != nil {
		t.Fatal(err)
	}
	var outs []output
	wtd := func(wantCode int, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, wtdBin, args...)
		cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+state)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if code := 0; err == nil || errors.As(err, &ee) {
			if ee != nil {
				code = ee.ExitCode()
			}
			if code != wantCode {
				t.Fatalf("wtd %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, stdout.String(), stderr.String())
			}
		} else {
			t.Fatalf("wtd %s: %v", strings.Join(args, " "), err)
		}
		name := "wtd " + strings.Join(args, " ")
		outs = append(outs, output{name + " (stdout)", stdout.String()}, output{name + " (stderr)", stderr.String()})
		return stdout.String() + stderr.String()
	}

	// wtd run: the playbook fails at its end, quoting the URI.
	runOut := wtd(1, "run", "--db", db, "--sample-interval", "100ms", "--allow-commands", pb, "-p", "uri="+uri, "-p", "refused="+refused)
	for _, want := range []string{"refused: ", "print\tmongodb://tuner:", "io.write mongodb://tuner:", "the run ends with mongodb://tuner:"} {
		if !strings.Contains(runOut, want) {
			t.Errorf("wtd run's output lacks %q: the test's premise fails\n%s", want, runOut)
		}
	}
	// A usage error quoting the URI (a parameter the playbook does not declare).
	wtd(2, "run", "--db", db, pb, "-p", "uri="+uri, "-p", "other="+uri)

	// The daemon: a schedule whose parameters hold the URIs, fired
	// through the API; a window on the URI (it opens) and one on the
	// refused URI (it fails).
	listen := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	os.WriteFile(filepath.Join(dir, "token"), []byte("t0ken\n"), 0o600)
	now := time.Now().UTC()
	cfgPath := filepath.Join(dir, "wtd.yaml")
	window := func(name, server string) string {
		return fmt.Sprintf(`  - name: %s
    cron: "CRON_TZ=UTC %d %d * * *"
    duration: 10m
    server: "%s"
    open:  { setParameter: { ttlMonitorEnabled: false } }
    close: { setParameter: { ttlMonitorEnabled: true } }
`, name, now.Minute(), now.Hour(), server)
	}
	cfg := fmt.Sprintf(`listen: %s
db: %s
mongod: %s
token_file: token
sample_interval: 100ms
allow_commands: true
schedules:
  - name: secret
    cron: "@yearly"
    playbook: secret.lua
    params: { uri: "%s", refused: "%s", ns: t.d }
results:
  uri: "%s"
  database: fleet
windows:
`, listen, db, mm, uri, refused, resultsURI) + window("good", uri) + window("refused", refused)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	wtd(0, "daemon", "--check", "--config", cfgPath)
	wtd(0, "schedules", "--config", cfgPath)
	daemon := exec.Command(wtdBin, "daemon", "--config", cfgPath)
	daemon.Env = append(os.Environ(), "WTD_STATE_DIR="+state, "WTD_DEBUG=1")
	log := &syncBuffer{}
	daemon.Stdout, daemon.Stderr = log, log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if daemon.ProcessState == nil {
			daemon.Process.Kill()
			daemon.Wait()
		}
	})
	waitFor(t, log, `"msg":"daemon start"`, 30*time.Second)
	waitFor(t, log, `"msg":"window open failed"`, 30*time.Second)
	waitFor(t, log, `"msg":"window open"`, 30*time.Second)
	api := apiClient{t: t, base: "http://" + listen, token: "t0ken"}
	var fired struct {
		RunID int64 `json:"run_id"`
	}
	api.want(202, "POST", "/api/v1/schedules/secret/run", &fired)
	if run := api.waitRun(fired.RunID, 90*time.Second); run.Run.Status != "failed" || !strings.Contains(run.Run.Reason, "the run ends with mongodb://tuner:xxxxx@") {
		t.Fatalf("the daemon's run: %+v", run)
	}
	waitFor(t, log, `"msg":"run end"`, 30*time.Second)
	waitFor(t, log, `"msg":"run pushed"`, 30*time.Second)
	for _, path := range []string{"/api/v1/schedules", "/api/v1/runs", "/api/v1/runs/1", fmt.Sprintf("/api/v1/runs/%d", fired.RunID),
		"/api/v1/runs/1/samples", "/api/v1/runs/1/samples?source=server:m1", "/metrics", "/healthz",
		"/", "/runs/1", fmt.Sprintf("/runs/%d", fired.RunID), "/schedules", fmt.Sprintf("/compare?a=1&b=%d&force=1", fired.RunID)} {
		_, body := api.call("GET", path, nil)
		outs = append(outs, output{"GET " + path, body})
	}
	wtd(0, "schedules", "--api", api.base, "--json")
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		t.Fatalf("daemon after SIGTERM: %v\n%s", err, log.String())
	}
	outs = append(outs, output{"the daemon's log", log.String()})

	// The read commands.
	for _, run := range []string{"1", fmt.Sprint(fired.RunID)} {
		wtd(0, "show", run, "--db", db)
		wtd(0, "show", run, "--db", db, "--json")
		to := filepath.Join(dir, "artifacts-"+run)
		wtd(0, "artifacts", run, "--db", db, "-o", to)
		b, err := os.ReadFile(filepath.Join(to, "notes.txt"))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, output{"notes.txt of run " + run + " as wtd artifacts writes it", string(b)})
	}
	wtd(0, "runs", "--db", db)
	// The results store: a push that fails (its error waits in the
	// outbox), the runs listed with their push state and from the store.
	wtd(1, "push", "1", "--db", db, "--results", resultsDown)
	wtd(0, "runs", "--db", db)
	wtd(0, "runs", "--db", db, "--json")
	wtd(0, "runs", "--results", resultsURI, "--results-db", "fleet")
	wtd(0, "runs", "--results", resultsURI, "--results-db", "fleet", "--json")
	if logins := resultsProxy.Logins(); len(logins) < 2 || logins[0] != "tuner:"+uriPassword {
		t.Errorf("the results store's proxy saw the logins %q: the results URI with the password was not used", logins)
	}
	searchResultsStore(t, results.URI)
	report := filepath.Join(dir, "report.html")
	wtd(0, "report", "1", fmt.Sprint(fired.RunID), "--db", db, "-o", report)
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, output{"wtd report", string(html)})

	if logins := proxy.Logins(); len(logins) < 4 || logins[0] != "tuner:"+uriPassword {
		t.Errorf("the proxy saw the logins %q: the URI with the password was not used", logins)
	}
	masked := 0
	for _, o := range outs {
		if strings.Contains(o.text, uriPassword) {
			t.Errorf("%s shows the password:\n%s", o.name, linesWith(o.text, uriPassword))
		}
		if strings.Contains(o.text, "tuner:xxxxx@") {
			masked++
		}
	}
	if masked < 10 {
		t.Errorf("only %d outputs show the masked URI: the test looks in the wrong places", masked)
	}
	searchDatabase(t, db)
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if b, err := os.ReadFile(path); err != nil || bytes.Contains(b, []byte(uriPassword)) {
			t.Errorf("wtd's file %s holds the password (%v)", path, err)
		}
		return nil
	})
}

// searchDatabase fails the test for each value of the database at path
// (every column of every row of every table, blobs and inflated sample
// frames included) and each of its files that holds uriPassword.
func searchDatabase(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	seen := map[string]int{}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				var text []byte
				switch v := v.(type) {
				case string:
					text = []byte(v)
				case []byte:
					text = v
					if table == "samples" && cols[i] == "frame" && len(v) > 0 && v[0]&2 != 0 {
						if inflated, err := io.ReadAll(flate.NewReader(bytes.NewReader(v[1:]))); err == nil {
							text = inflated
						}
					}
				}
				if bytes.Contains(text, []byte(uriPassword)) {
					t.Errorf("%s.%s holds the password: %.300q", table, cols[i], text)
				}
				if bytes.Contains(text, []byte("tuner:xxxxx@")) {
					seen[table+"."+cols[i]]++
				}
			}
		}
		rows.Close()
	}
	for _, col := range []string{"runs.params", "runs.playbook", "servers.uri", "events.message", "steps.name", "steps.labels",
		"steps.error", "changes.restore", "changes.change", "artifacts.content", "schedule_events.detail", "outbox.last_error", "outbox.dest"} {
		if seen[col] == 0 {
			t.Errorf("no %s holds the masked URI: the test looks in the wrong place (masked URIs in %v)", col, seen)
		}
	}
	for _, name := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(uriPassword)) {
			t.Errorf("the file %s holds the password", filepath.Base(name))
		}
	}
}

// searchResultsStore fails the test for each document of the results
// store (database fleet of the server at uri) that holds uriPassword, and
// when none holds the masked URI (the pushed run quotes it).
func searchResultsStore(t *testing.T, uri string) {
	t.Helper()
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	db := client.Database("fleet")
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	masked := 0
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for cur.Next(ctx) {
			if bytes.Contains(cur.Current, []byte(uriPassword)) {
				t.Errorf("results store: a document of %s holds the password: %.300s", name, cur.Current.String())
			}
			if bytes.Contains(cur.Current, []byte("tuner:xxxxx@")) {
				masked++
			}
		}
		cur.Close(ctx)
	}
	if masked == 0 {
		t.Errorf("no document of the results store (%v) holds the masked URI: the run was not pushed", names)
	}
}

// linesWith returns the lines of text that contain s.
func linesWith(text, s string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			out = append(out, fmt.Sprintf("%.300s", line))
		}
	}
	return strings.Join(out, "\n")
}
