package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"wtd/internal/fakemongod"
)

// TestAttachedServerWithoutWiredTiger runs a playbook against a server wtd
// did not start and that reports no WiredTiger statistics. The record must
// say what was attached, that nothing restarted, and that the cache figures
// were not measured: null and "–", verdict unknown, never a zero.
func TestAttachedServerWithoutWiredTiger(t *testing.T) {
	_, mm := binaries(t)
	fake, err := fakemongod.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local m = mongod.connect{ uri = "`+fake.URI()+`" }
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = 300, doc_bytes = 100 } end }
step{ name = "reads", round = 1, run = function()
  return m:workload{ ns = "t.c", ops = 200, mix = { read = 1 }, key_space = 300 }
end }
report.table{}
`)
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, "--sample-interval", "100ms", pb)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	ctx := context.Background()
	st := openDB(t, db)
	runs, _ := st.ListRuns(ctx, 1)
	r := runs[0]
	if r.TargetPath != "" || r.TargetURI != fake.URI() || r.TargetVersion != "7.0.0-fake" {
		t.Errorf("target recorded as path %q uri %q version %q, want the attached server %s 7.0.0-fake", r.TargetPath, r.TargetURI, r.TargetVersion, fake.URI())
	}
	servers, err := st.Servers(ctx, r.ID)
	if err != nil || len(servers) != 1 {
		t.Fatalf("servers = %+v, %v", servers, err)
	}
	if s := servers[0]; s.Started || s.Binary != "" || s.PID != 0 || s.Version != "7.0.0-fake" || s.GitVersion != "fakefakefake" || s.URI != fake.URI() {
		t.Errorf("server record = %+v", s)
	}
	steps, _ := st.Steps(ctx, r.ID)
	if len(steps) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	var load, reads struct {
		Cleared    string   `json:"cleared"`
		Verdict    *string  `json:"verdict"`
		Reason     string   `json:"reason"`
		CacheBytes *float64 `json:"cache_bytes"`
	}
	json.Unmarshal(steps[0].Provenance, &load)
	json.Unmarshal(steps[1].Provenance, &reads)
	if load.Verdict != nil || !strings.Contains(load.Reason, "load step") {
		t.Errorf("load step verdict %v (%s), want none", load.Verdict, load.Reason)
	}
	if reads.Cleared != "none" {
		t.Errorf("cleared %q: nothing restarted an attached server", reads.Cleared)
	}
	if reads.Verdict == nil || *reads.Verdict != "unknown" || reads.Reason != "the server reports no WiredTiger cache statistics" {
		t.Errorf("verdict %v: %s", reads.Verdict, reads.Reason)
	}
	if reads.CacheBytes != nil {
		t.Errorf("cache_bytes = %v, want null", *reads.CacheBytes)
	}
	var results struct {
		Server map[string]any `json:"server"`
	}
	json.Unmarshal(steps[1].Results, &results)
	for _, k := range []string{"pages_read", "cache_used_peak", "dirty_peak", "app_thread_evict_micros"} {
		if v, ok := results.Server[k]; !ok || v != nil {
			t.Errorf("results.server.%s = %v (present %v), want null", k, v, ok)
		}
	}
	row := tableRow(res.stdout, "reads")
	if !strings.Contains(row, "–") || strings.Contains(row, " 0.0 ") {
		t.Errorf("report row shows unmeasured figures as numbers: %s", row)
	}
	show := runCLI(t, nil, "show", "--db", db, strconv.FormatInt(r.ID, 10))
	for _, want := range []string{"attached (not started by wtd)", "version 7.0.0-fake", "pages read –", "– cache, ", "unknown"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
}

// tableRow returns the first line of a report table that names step.
func tableRow(out, step string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "│ "+step+" ") {
			return l
		}
	}
	return ""
}

// TestReadOnlyCommandsNeedADatabase: a mistyped --db must not create an
// empty database (or its folders) and say "no runs".
func TestReadOnlyCommandsNeedADatabase(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo", "wtd.db")
	for _, args := range [][]string{{"runs"}, {"show", "1"}, {"samples", "1"}} {
		res := runCLI(t, nil, append(args, "--db", missing)...)
		if res.code != 2 || !strings.Contains(res.stderr, "no results database at "+missing) {
			t.Errorf("%v: exit %d\n%s", args, res.code, res.stderr)
		}
		if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, filepath.Dir(missing))
		}
	}
}

// TestDatabaseIsPrivate: the results database and its directory are its
// owner's only.
func TestDatabaseIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "wtd")
	db := filepath.Join(dir, "wtd.db")
	pb := writePlaybook(t, "log('hello')\n")
	state := filepath.Join(t.TempDir(), "state")
	res := runCLI(t, map[string]string{"WTD_STATE_DIR": state}, "run", "--db", db, pb)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, db: 0o600, db + "-wal": 0o600, state: 0o700,
		filepath.Join(state, "runs"): 0o700, filepath.Join(state, "experiment.lock"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			if strings.HasSuffix(path, "-wal") && os.IsNotExist(err) {
				continue
			}
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}

// TestDamagedDatabaseIsCheckedFirst: a results database that fails
// SQLite's quick_check stops the run before any server starts.
func TestDamagedDatabaseIsCheckedFirst(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, "log('x')\n")
	if res := runCLI(t, nil, "run", "--db", db, pb); res.code != 0 {
		t.Fatalf("first run: %d\n%s", res.code, res.stderr)
	}
	// Overwrite the middle of the file (past the header page) with junk.
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	junk := make([]byte, fi.Size()/2)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	f.WriteAt(junk, 4096)
	f.Close()
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, writePlaybook(t, "mongod.start{}\n"))
	if res.code != 1 || !strings.Contains(res.stderr, "check results database "+db+": ") || !strings.Contains(res.stderr, "nothing was started") {
		t.Errorf("run on a damaged database: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if pids := serverPIDs(res.stdout + res.stderr); len(pids) > 0 || strings.Contains(res.stdout, "started ") {
		t.Errorf("a server was started on a damaged database:\n%s", res.stdout)
	}
}
