package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"wtd/internal/testbin"
	"wtd/internal/testhost"

	"wtd/engine/store"
)

// binaries returns wtd and minimongod built from this checkout.
func binaries(t *testing.T) (wtd, minimongod string) {
	t.Helper()
	return testbin.Wtd(t), testbin.Minimongod(t)
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs wtd in-process with a fresh database unless args give one.
func runCLI(t *testing.T, getenv map[string]string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	if getenv == nil {
		getenv = map[string]string{}
	}
	if _, ok := getenv["WTD_STATE_DIR"]; !ok {
		getenv["WTD_STATE_DIR"] = t.TempDir()
	}
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return getenv[k] }, Host: testhost.New(t)}
	code := run(context.Background(), args, env)
	return cliResult{code, out.String(), errb.String()}
}

func writePlaybook(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pb.lua")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const tinyPlaybook = `
local p = params{ docs = 2000, reads = 500, gb = 0.25 }
local m = mongod.start{ cacheSizeGB = p.gb }
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 500 } end }
host.drop_caches()
step{ name = "reads", round = 1, run = function()
  return m:workload{ ns = "t.c", ops = p.reads, mix = { read = 1 }, working_set = 1.0 }
end }
report.table{ by = "cacheSizeGB" }
`

func TestRunTinyPlaybookRecordsEverything(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, tinyPlaybook)
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, "--sample-interval", "200ms", pb, "-p", "reads=700")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "reads") || !strings.Contains(res.stdout, "load") {
		t.Errorf("no report table in the output:\n%s", res.stdout)
	}
	// A load's latencies are per batch, in columns of their own: the load
	// row leaves P50/P99 empty and fills BATCH P50/P99; the reads row the
	// reverse.
	if !strings.Contains(res.stdout, "│ BATCH P50 MS │ BATCH P99 MS │") {
		t.Errorf("no batch latency columns:\n%s", res.stdout)
	}
	cells := func(row string) []string {
		parts := strings.Split(row, "│")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	// Columns: "", CACHESIZEGB, STEP, ROUND, STATUS, OPS, OPS/S, P50, P99, BATCH P50, BATCH P99, ...
	if c := cells(tableRow(res.stdout, "load")); len(c) < 11 || c[7] != "" || c[8] != "" || c[9] == "" || c[10] == "" {
		t.Errorf("load row: %q", c)
	}
	if c := cells(tableRow(res.stdout, "reads")); len(c) < 11 || c[7] == "" || c[8] == "" || c[9] != "" || c[10] != "" {
		t.Errorf("reads row: %q", c)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	runs, _ := st.ListRuns(ctx, 10)
	if len(runs) != 1 || runs[0].Status != "ok" {
		t.Fatalf("runs = %+v", runs)
	}
	r := runs[0]
	if r.Params["reads"] != float64(700) || r.Params["docs"] != float64(2000) {
		t.Errorf("params recorded = %v", r.Params)
	}
	if r.PlaybookSHA256 == "" || !strings.Contains(r.Playbook, "mongod.start") || r.TargetVersion == "" || r.TargetPath != mm {
		t.Errorf("run record = %+v", r)
	}
	steps, _ := st.Steps(ctx, r.ID)
	if len(steps) != 2 || steps[1].Name != "reads" || steps[1].Status != "ok" {
		t.Fatalf("steps = %+v", steps)
	}
	for _, want := range []string{`"count":700`, `"pages_read"`} {
		if !strings.Contains(string(steps[1].Results), want) {
			t.Errorf("step results lack %s: %s", want, steps[1].Results)
		}
	}
	if !strings.Contains(string(steps[1].Settings), `"cache_max_bytes":268435456`) {
		t.Errorf("settings = %s", steps[1].Settings)
	}
	var load, reads struct {
		Verdict, Reason, Cleared string
		Dropped                  bool
		Documents                *float64
	}
	json.Unmarshal(steps[0].Provenance, &load)
	json.Unmarshal(steps[1].Provenance, &reads)
	if load.Verdict != "" || !strings.Contains(load.Reason, "load step") {
		t.Errorf("load step verdict %q (%s), want none", load.Verdict, load.Reason)
	}
	// The drop happened (on the stand-in host, or the real one with
	// WTD_TEST_HOST=1); the server was not restarted since the load; 1 MB
	// of data stays in a 256 MB cache, so WiredTiger reads no pages.
	if reads.Cleared != "drop_caches" || !reads.Dropped || reads.Documents == nil || *reads.Documents != 2000 ||
		reads.Verdict != "hot" || reads.Reason != "WiredTiger read no pages into its cache: the data was already in the WiredTiger cache" {
		t.Errorf("reads provenance = %s", steps[1].Provenance)
	}
	if n, _ := st.SampleCount(ctx, r.ID); n < 2 {
		t.Errorf("%d samples", n)
	}
	show := runCLI(t, nil, "show", "--db", db, strconv.FormatInt(r.ID, 10))
	if show.code != 0 || !strings.Contains(show.stdout, "step 2  reads  ok") || !strings.Contains(show.stdout, "provenance:") {
		t.Errorf("show: %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	csv := runCLI(t, nil, "samples", "--db", db, strconv.FormatInt(r.ID, 10), "--metric", "wiredTiger.cache.bytes currently in the cache")
	if lines := strings.Split(strings.TrimSpace(csv.stdout), "\n"); csv.code != 0 || len(lines) < 3 || !strings.HasPrefix(lines[0], "time,seconds,") {
		t.Errorf("samples: %d\n%s%s", csv.code, csv.stdout, csv.stderr)
	}
	list := runCLI(t, nil, "runs", "--db", db)
	if list.code != 0 || !strings.Contains(list.stdout, "pb.lua") {
		t.Errorf("runs: %d\n%s%s", list.code, list.stdout, list.stderr)
	}
}

func TestBadInput(t *testing.T) {
	_, mm := binaries(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wtd.db")
	badServer := filepath.Join(dir, "bad-mongod")
	os.WriteFile(badServer, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'db version v4.4.0'; exit 0; fi\necho 'cannot start: bad disk' >&2\nexit 3\n"), 0o755)
	for _, tc := range []struct {
		name     string
		playbook string
		args     []string
		mongod   string
		code     int
		want     []string
		status   string // the run's recorded status, "" when no run is recorded
	}{
		// Usage errors are found before anything is recorded.
		{"syntax error", "local x = = 1\n", nil, mm, 2, []string{"pb.lua:1: syntax error near '='"}, ""},
		{"unknown -p name", "local p = params{ docs = 1 }\nmongod.start{}\n", []string{"-p", "dcos=5"}, mm, 2, []string{`unknown parameter "dcos"`, "docs"}, ""},
		{"-p of the wrong type", "local x = 1 + 1\nlocal p = params{ docs = 1 }\n", []string{"-p", "docs=many"}, mm, 2, []string{`"many" is not a number`}, ""},
		{"-p to a playbook without params", "log('x')\n", []string{"-p", "docs=5"}, mm, 2,
			[]string{"pb.lua declares no parameters (it never calls params{}): -p docs=5 is not one"}, ""},
		{"-p to a playbook that acts before params", "log('x')\nlocal p = params{ docs = 1 }\nmongod.start{}\n", []string{"-p", "nosuch=1"}, mm, 2,
			[]string{`pb.lua:2: params: unknown parameter "nosuch"`, "the playbook's parameters are docs"}, ""},
		{"-p of the wrong type to a playbook that acts before params", "mongod.start{}\nlocal p = params{ docs = 1 }\n", []string{"-p", "docs=many"}, mm, 2,
			[]string{`pb.lua:2: params: parameter docs: -p docs=many: "many" is not a number`}, ""},
		// A setting out of its knob's range is found by the check, before a run.
		{"cacheSizeGB 0.1", "local m = mongod.start{ cacheSizeGB = 0.25 }\nm:restart{ cacheSizeGB = 0.1 }\n", nil, mm, 2, []string{"pb.lua:2", "0.25"}, ""},
		{"cacheSizeGB 0.1 at start", "mongod.start{ cacheSizeGB = 0.1 }\n", nil, mm, 2, []string{"pb.lua:1", "greater than or equal to 0.25"}, ""},
		{"server exits at start", "mongod.start{}\n", nil, badServer, 1, []string{"pb.lua:1", "exited with status 3", "cannot start: bad disk"}, "failed"},
		{"missing playbook", "", nil, mm, 2, []string{"no such file"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := filepath.Join(t.TempDir(), "missing.lua")
			if tc.playbook != "" {
				pb = writePlaybook(t, tc.playbook)
			}
			dbPath := filepath.Join(t.TempDir(), "wtd.db")
			args := append([]string{"run", "--db", dbPath, "--mongod", tc.mongod, pb}, tc.args...)
			res := runCLI(t, nil, args...)
			if res.code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", res.code, tc.code, res.stdout, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			// However the run failed, the servers it started are gone.
			if pids := serverPIDs(res.stdout); len(pids) > 0 {
				t.Errorf("servers still running after the run failed: %v", pids)
			}
			ctx := context.Background()
			if tc.status == "" {
				if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
					t.Errorf("a usage error created the results database (%v)", err)
				}
				return
			}
			st, err := store.Open(ctx, dbPath)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close(ctx)
			runs, _ := st.ListRuns(ctx, 5)
			if len(runs) != 1 || runs[0].Status != tc.status || runs[0].Reason == "" {
				t.Errorf("runs = %+v", runs)
			}
		})
	}
	_ = db
}

// TestSignalsAbortRun: Ctrl-C (SIGINT) and SIGTERM stop the current step,
// shut the servers down, record the run aborted and exit 130.
func TestSignalsAbortRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testSignalAbortsRun(t, sig) })
	}
}

func testSignalAbortsRun(t *testing.T, sig syscall.Signal) {
	wtd, mm := binaries(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wtd.db")
	pb := writePlaybook(t, `
local m = mongod.start{}
step{ name = "wait", run = function() sleep(120) end }
`)
	cmd := exec.Command(wtd, "run", "--db", db, "--mongod", mm, "--sample-interval", "100ms", pb)
	cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+t.TempDir())
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the server is up and sampled.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "wait started") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	pids := serverPIDs(out.String())
	if len(pids) == 0 {
		t.Fatalf("no minimongod running under wtd:\n%s", out.String())
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", code, err, out.String())
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			t.Errorf("server %d still running after %s", pid, sig)
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	runs, _ := st.ListRuns(ctx, 5)
	if len(runs) != 1 || runs[0].Status != "aborted" || !strings.HasPrefix(runs[0].Reason, "interrupted") {
		t.Fatalf("runs = %+v", runs)
	}
	if n, _ := st.SampleCount(ctx, runs[0].ID); n < 3 {
		t.Errorf("only %d samples kept", n)
	}
	steps, _ := st.Steps(ctx, runs[0].ID)
	if len(steps) != 1 || steps[0].Status != "aborted" {
		t.Errorf("steps = %+v", steps)
	}
}

var pidRE = regexp.MustCompile(`\(pid (\d+),`)

// serverPIDs returns the pids of the servers wtd said it started.
func serverPIDs(log string) []int {
	var out []int
	for _, m := range pidRE.FindAllStringSubmatch(log, -1) {
		pid, _ := strconv.Atoi(m[1])
		if syscall.Kill(pid, 0) == nil && !zombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestVersionAndHelp(t *testing.T) {
	res := runCLI(t, nil, "version")
	if res.code != 0 || !strings.HasPrefix(res.stdout, "wtd ") {
		t.Errorf("version: %+v", res)
	}
	res = runCLI(t, nil, "run", "--help")
	if res.code != 0 || !strings.Contains(res.stdout, "--sample-interval") || !strings.Contains(res.stdout, "Exit status") {
		t.Errorf("run --help: %+v", res)
	}
	res = runCLI(t, nil, "frobnicate")
	if res.code != 2 {
		t.Errorf("unknown command: exit %d", res.code)
	}
	home := t.TempDir()
	res = runCLI(t, map[string]string{"HOME": home}, "show", "42")
	if res.code != 2 || !strings.Contains(res.stderr, "no results database at "+home) {
		t.Errorf("show 42 without a database: %+v", res)
	}
	db := filepath.Join(t.TempDir(), "wtd.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close(context.Background())
	res = runCLI(t, nil, "show", "--db", db, "42")
	if res.code != 2 || !strings.Contains(res.stderr, "no run 42") {
		t.Errorf("show 42: %+v", res)
	}
}

func TestDBPathResolution(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/x/flag.db", map[string]string{"WTD_DB": "/x/env.db"}, "/x/flag.db"},
		{"", map[string]string{"WTD_DB": "/x/env.db", "XDG_DATA_HOME": "/xdg"}, "/x/env.db"},
		{"", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/h"}, "/xdg/wtd/wtd.db"},
		{"", map[string]string{"HOME": "/h"}, "/h/.local/share/wtd/wtd.db"},
	} {
		got, err := dbPath(tc.flag, func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("dbPath(%q, %v) = %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer process and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
