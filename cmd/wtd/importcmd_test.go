package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const import406 = "../../internal/ftdc/testdata/4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000"

// TestImportThenReadBack imports a real 4.0 replica set member's file,
// reads it back with show, samples and compare, and imports it again.
func TestImportThenReadBack(t *testing.T) {
	env := map[string]string{"WTD_DB": filepath.Join(t.TempDir(), "wtd.db")}
	res := runCLI(t, env, "import", import406, "--name", "rs0a", "--json",
		"--step", "first=+0..+2m", "--step", "later=2019-03-15T19:40:00Z..2019-03-15T19:42:00Z")
	if res.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var runs []struct {
		Path, Server, Version string
		Run, Samples          int64
		First, Last           time.Time
		Skipped               []string
	}
	if err := json.Unmarshal([]byte(res.stdout), &runs); err != nil {
		t.Fatalf("--json: %v\n%s", err, res.stdout)
	}
	if len(runs) != 1 || runs[0].Samples != 307 || runs[0].Version != "4.0.6" || runs[0].Path != import406 ||
		runs[0].Skipped == nil || len(runs[0].Skipped) != 0 || !runs[0].Last.After(runs[0].First) {
		t.Fatalf("runs %+v, want one of 307 samples of 4.0.6, nothing skipped", runs)
	}
	id := strings.TrimSpace(strings.Split(strings.Split(res.stdout, `"run": `)[1], ",")[0])

	show := runCLI(t, env, "show", id)
	for _, want := range []string{"trigger:   import", "replSet=rs0", "version 4.0.6", "attached (not started by wtd)",
		"unknown: imported: wtd did not control the caches", "first", "later", "samples:   614 (host, server:rs0a)"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s%s", want, show.stdout, show.stderr)
		}
	}
	samples := runCLI(t, env, "samples", id, "--source", "server:rs0a", "--metric", "wiredTiger.cache.bytes currently in the cache")
	if samples.code != 0 || strings.Count(samples.stdout, "\n") != 308 {
		t.Errorf("samples: exit %d, %d lines, want a header and 307 rows\n%s", samples.code, strings.Count(samples.stdout, "\n"), samples.stderr)
	}
	// systemMetrics' memory, as the host's in bytes, in every sample.
	host := runCLI(t, env, "samples", id, "--source", "host", "--metric", "mem.total")
	if host.code != 0 || strings.Count(host.stdout, "\n") != 308 {
		t.Errorf("host samples: exit %d, %d lines, want a header and 307 rows\n%s%s", host.code, strings.Count(host.stdout, "\n"), host.stdout, host.stderr)
	}
	names := runCLI(t, env, "samples", id, "--source", "server:rs0a", "--match", "replSetGetStatus.members.0.health")
	if !strings.Contains(names.stdout, "replSetGetStatus.members.0.health") {
		t.Errorf("no replSetGetStatus metrics: %s%s", names.stdout, names.stderr)
	}
	cmp := runCLI(t, env, "compare", id+"@first", id+"@later")
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "first vs later") || !strings.Contains(cmp.stdout, "cache peak MB") {
		t.Errorf("compare: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	report := filepath.Join(t.TempDir(), "r.html")
	if rep := runCLI(t, env, "report", id, "-o", report); rep.code != 0 {
		t.Errorf("report: exit %d\n%s", rep.code, rep.stderr)
	}
	if fi, err := os.Stat(report); err != nil || fi.Size() < 10000 {
		t.Errorf("report file: %v", err)
	}

	again := runCLI(t, env, "import", import406)
	if again.code != 0 || !strings.Contains(again.stdout, "nothing new imported") || !strings.Contains(again.stderr, "imported before") {
		t.Errorf("import again: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	list := runCLI(t, env, "runs")
	if strings.Count(list.stdout, "import:") != 1 {
		t.Errorf("runs after importing again:\n%s", list.stdout)
	}

	// Once its run is removed, the file can be imported anew.
	if rm := runCLI(t, env, "rm", id); rm.code != 0 {
		t.Fatalf("rm: exit %d\n%s", rm.code, rm.stderr)
	}
	anew := runCLI(t, env, "import", import406)
	if anew.code != 0 || !strings.Contains(anew.stdout, "307 samples") || strings.Contains(anew.stderr, "imported before") {
		t.Errorf("import after rm: exit %d\n%s%s", anew.code, anew.stdout, anew.stderr)
	}
	if third := runCLI(t, env, "import", import406); !strings.Contains(third.stderr, "imported before") {
		t.Errorf("third import: %s%s", third.stdout, third.stderr)
	}
}

func TestImportRefusesWhatIsNotFTDC(t *testing.T) {
	env := map[string]string{"WTD_DB": filepath.Join(t.TempDir(), "wtd.db")}
	p := filepath.Join(t.TempDir(), "mongod.log")
	if err := os.WriteFile(p, []byte(`{"t":{"$date":"2024-01-01T00:00:00Z"},"s":"I","msg":"a log line, not FTDC"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, env, "import", p)
	if res.code != exitUsage || !strings.Contains(res.stderr, p) || !strings.Contains(res.stderr, "not an FTDC file") {
		t.Errorf("exit %d, stderr %q; want a usage error naming %s", res.code, res.stderr, p)
	}
	for _, bad := range []string{"x", "a=1..2", "a=+5m..+1m", "=+0..+1m"} {
		if res := runCLI(t, env, "import", import406, "--step", bad); res.code != exitUsage || !strings.Contains(res.stderr, "--step") {
			t.Errorf("--step %q: exit %d, stderr %q", bad, res.code, res.stderr)
		}
	}
}
