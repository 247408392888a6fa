package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowListsTuneTrials: wtd show of a run with a tune{} search lists
// the baseline and each trial (settings, objective, status) and the
// verdict; --json has them under tunings.
func TestShowListsTuneTrials(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	dir := t.TempDir()
	pb := filepath.Join(dir, "tiny_tune.lua")
	os.WriteFile(pb, []byte(`local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "d.c", docs = 5000, doc_bytes = 200 }
tune{ server = m, knobs = { eviction_dirty_target = {2, 10} }, objective = "p99",
  workload = { ns = "d.c", duration = 1, mix = { read = 1, update = 1 }, rate = 200 },
  budget = { trials = 2 }, confirm = 0, guard = { p99_factor = 0, behind = 0 } }
`), 0o644) // no guards: a second of a busy host must not fail a trial here

	db := filepath.Join(dir, "wtd.db")
	env := map[string]string{"WTD_STATE_DIR": filepath.Join(dir, "state")}
	if res := runCLI(t, env, "run", "--db", db, "--mongod", mm, pb); res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	res := runCLI(t, env, "show", "--db", db, "latest")
	if res.code != 0 {
		t.Fatalf("show: exit %d: %s", res.code, res.stderr)
	}
	for _, want := range []string{"tune search 1 (3 trials)", "  trial          step  status          p99 ms  settings",
		"  baseline          1  ok   ", "  trial 1           2  ok   ", "  trial 2           3  ok   ", "eviction_dirty_target=", "  verdict: "} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, res.stdout)
		}
	}
	js := runCLI(t, env, "show", "--db", db, "--json", "latest")
	var doc struct {
		Tunings []struct {
			Search int
			Trials []struct {
				N         int
				Name      string
				Settings  map[string]float64
				Objective *float64
				Status    string
				Step      int
			}
			Verdict *struct{ Verdict string }
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("show --json: %v", err)
	}
	if len(doc.Tunings) != 1 || len(doc.Tunings[0].Trials) != 3 || doc.Tunings[0].Verdict == nil {
		t.Fatalf("tunings %+v", doc.Tunings)
	}
	for i, tr := range doc.Tunings[0].Trials {
		if tr.N != i || tr.Step != i+1 || tr.Status != "ok" || tr.Objective == nil || len(tr.Settings) != 1 {
			t.Errorf("trial %d: %+v", i, tr)
		}
	}
}
