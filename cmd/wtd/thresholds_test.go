package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"wtd/engine/store"
)

// thresholdPlaybook reads a small collection and holds its reads to
// thresholds: one no read can miss (p99 under a minute), one a read
// cannot meet (more than 10^9 reads a second), and one against the
// previous ok run.
const thresholdPlaybook = `
local p = params{ min_ops = 1e9 }
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "t.c", docs = 500, doc_bytes = 200 }
threshold{ step = "reads", measure = "p99", max = 60000 }
threshold{ step = "reads", measure = "ops/s", min = p.min_ops }
threshold{ step = "reads", measure = "ops/s", vs_baseline = "-99%" }
step{ name = "reads", run = function()
  return m:workload{ ns = "t.c", ops = 300, mix = { read = 1 } }
end }
`

// A threshold that does not hold fails the run (exit 1) with the
// violation in its reason; wtd show lists every threshold with how it
// held, and show --json carries them. The same playbook with a bound it
// meets ends ok, its vs_baseline threshold judged against the ok run
// before it (the first has none).
func TestThresholdsGateTheRun(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, thresholdPlaybook)
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, pb)
	if res.code != 1 {
		t.Fatalf("exit %d, want 1 (a threshold failed)\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	ok1 := runCLI(t, nil, "run", "--db", db, "--mongod", mm, pb, "-p", "min_ops=1")
	ok2 := runCLI(t, nil, "run", "--db", db, "--mongod", mm, pb, "-p", "min_ops=1")
	for i, r := range []cliResult{ok1, ok2} {
		if r.code != 0 {
			t.Fatalf("run %d with min_ops=1: exit %d\nstdout:\n%s\nstderr:\n%s", i+2, r.code, r.stdout, r.stderr)
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	r1, err := st.GetRun(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Status != store.StatusFailed || !strings.Contains(r1.Reason, `1 threshold failed: ops/s of "reads" `) ||
		!strings.Contains(r1.Reason, " < min 1e+09") {
		t.Errorf("run 1: %s %q, want failed naming the ops/s threshold", r1.Status, r1.Reason)
	}
	states := func(id int64) []string {
		ths, err := st.Thresholds(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, th := range ths {
			if th.Value == nil || *th.Value <= 0 {
				t.Errorf("run %d threshold %d: value %v, want the measured one", id, th.Seq, th.Value)
			}
			out = append(out, th.State)
		}
		return out
	}
	want := map[int64]string{1: "passed failed no baseline", 2: "passed passed no baseline", 3: "passed passed passed"}
	for id, w := range want {
		if got := strings.Join(states(id), " "); got != w {
			t.Errorf("run %d thresholds: %s, want %s", id, got, w)
		}
	}
	show := runCLI(t, nil, "show", "--db", db, "1")
	for _, w := range []string{"  threshold: passed      p99 ms of \"reads\" ", "             failed      ops/s of \"reads\" ",
		"             no baseline ops/s of \"reads\" vs_baseline -99%: no earlier ok run"} {
		if !strings.Contains(show.stdout, w) {
			t.Errorf("wtd show 1 lacks %q:\n%s", w, show.stdout)
		}
	}
	js := runCLI(t, nil, "show", "--db", db, "3", "--json")
	var doc struct {
		Thresholds []struct {
			Spec        map[string]any `json:"spec"`
			Measure     string         `json:"measure"`
			BaselineRun *int64         `json:"baseline_run"`
			Limit       *float64       `json:"limit"`
			State       string         `json:"state"`
		} `json:"thresholds"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("show --json: %v\n%s", err, js.stdout)
	}
	if len(doc.Thresholds) != 3 {
		t.Fatalf("show --json thresholds: %+v", doc.Thresholds)
	}
	vs := doc.Thresholds[2]
	if vs.Spec["vs_baseline"] != "-99%" || vs.Measure != "ops/s" || vs.BaselineRun == nil || *vs.BaselineRun != 2 || vs.Limit == nil || vs.State != "passed" {
		t.Errorf("vs_baseline threshold of run 3: %+v", vs)
	}
}

// A threshold declared wrong stops the playbook where it is declared,
// naming what is wrong, before any step runs.
func TestThresholdDeclaredWrong(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `threshold{ step = "reads", measure = "p98", max = 5 }`)
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, pb)
	if res.code == 0 || !strings.Contains(res.stderr, `pb.lua:1: threshold: unknown measure "p98": want one of ops/s, p50, p99`) {
		t.Errorf("exit %d\nstderr:\n%s", res.code, res.stderr)
	}
}
