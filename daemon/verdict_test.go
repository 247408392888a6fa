package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/internal/testruns"
	"wtd/schedule"
)

// TestSecondScheduledRunRecordsAVerdict: a schedule's first run ends ok
// with the verdict "no baseline", its second with a verdict against the
// first (same playbook and parameters: comparable), recorded with the
// run's end and shown by the API; a run aborted by SIGTERM gets none. The
// playbook reads from a server the test started, at 400 reads/s in the
// first run (the one that finds the collection empty and loads it) and at
// 100 reads/s in the later ones: the second run is slower in ops/s, four
// times, in every second.
func TestSecondScheduledRunRecordsAVerdict(t *testing.T) {
	dir := t.TempDir()
	srv := testbin.StartMinimongod(t, 0)
	os.WriteFile(filepath.Join(dir, "reads.lua"), []byte(`
local p = params{ uri = "" }
local m = mongod.connect{ uri = p.uri }
local first = m:command("count", { count = "c" }, "t").n == 0
if first then m:load{ ns = "t.c", docs = 1000, doc_bytes = 200 } end
step{ name = "reads", run = function()
  return m:workload{ ns = "t.c", duration = 6, rate = first and 400 or 100, mix = { read = 1 } }
end }
`), 0o644)
	port := testbin.FreePort(t)
	cfg := filepath.Join(dir, "wtd.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`listen: 127.0.0.1:%d
db: wtd.db
sample_interval: 0s
schedules:
  - name: reads
    cron: "@every 1s"
    playbook: reads.lua
    params: { uri: "%s" }
`, port, srv.URI)), 0o644)
	signals, done, logText := startDaemon(t, cfg)
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		signals <- syscall.SIGTERM
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(40 * time.Second):
			t.Errorf("the daemon did not stop within 40 s:\n%s", logText())
		}
	}
	defer stop()

	api := fmt.Sprintf("http://127.0.0.1:%d/api/v1/runs", port)
	// A run of the API with its verdict decoded.
	type apiRun struct {
		ID      int64
		Trigger string
		Verdict *compare.RunVerdict
	}
	var runs []apiRun
	deadline := time.Now().Add(90 * time.Second)
	for {
		runs = nil
		if resp, err := http.Get(api + "?status=ok"); err == nil {
			var body struct{ Runs []apiRun }
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			for _, r := range body.Runs {
				if r.Verdict != nil {
					runs = append(runs, r)
				}
			}
		}
		if len(runs) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two ok runs with verdicts within 90 s (%d):\n%s", len(runs), logText())
		}
		time.Sleep(200 * time.Millisecond)
	}
	first, second := runs[len(runs)-1], runs[len(runs)-2]
	if first.ID != 1 || first.Trigger != "schedule reads" || first.Verdict.Verdict != compare.VerdictNoBaseline || first.Verdict.Baseline != 0 {
		t.Errorf("first run %d (%s): verdict %+v, want no baseline", first.ID, first.Trigger, first.Verdict)
	}
	v := second.Verdict
	if second.ID != 2 || second.Trigger != "schedule reads" || v.Run != 2 || v.Baseline != 1 || v.Alpha != compare.DefaultAlpha ||
		v.Test != compare.TestMannWhitney || v.Verdict != compare.Slower || fmt.Sprint(v.Slower) != "[reads]" || len(v.Faster) != 0 || len(v.Reasons) != 0 {
		t.Errorf("second run %d (%s): verdict %+v, want slower in reads against run 1", second.ID, second.Trigger, v)
	}
	if len(v.Steps) != 1 || v.Steps[0].Step != "reads" || v.Steps[0].Verdict != compare.Slower || v.Steps[0].Measure != "ops/s" ||
		v.Steps[0].ChangePct == nil || *v.Steps[0].ChangePct > -60 || *v.Steps[0].ChangePct < -90 || v.Steps[0].P == nil || *v.Steps[0].P >= compare.DefaultAlpha {
		t.Errorf("second run's verdict: steps %+v, want reads at about -75%% in ops/s with p < 0.05", v.Steps)
	}
	resp, err := http.Get(fmt.Sprintf("%s/%d", api, second.ID))
	if err != nil {
		t.Fatal(err)
	}
	var detail struct{ Run apiRun }
	json.NewDecoder(resp.Body).Decode(&detail)
	resp.Body.Close()
	if detail.Run.Verdict == nil || detail.Run.Verdict.Verdict != v.Verdict || detail.Run.Verdict.Baseline != 1 {
		t.Errorf("GET /api/v1/runs/%d: verdict %+v", second.ID, detail.Run.Verdict)
	}
	if !strings.Contains(logText(), "msg=\"regression verdict\" schedule=reads run=2 baseline=1") {
		t.Errorf("no log line of run 2's verdict:\n%s", logText())
	}

	// The verdict is in the database, with the run's end; a run that did
	// not end ok (the one SIGTERM aborts, if any) has none.
	stop()
	st, err := store.OpenExisting(context.Background(), filepath.Join(dir, "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	raw, err := st.RunEndAttr(context.Background(), record.VerdictAttr, 2)
	if err != nil || !strings.Contains(string(raw[2]), `"baseline":1`) || !strings.Contains(string(raw[2]), `"verdict":"slower"`) {
		t.Errorf("recorded verdict of run 2: %s %v", raw[2], err)
	}
	all, err := st.ListRuns(context.Background(), 0)
	if err != nil || len(all) < 2 {
		t.Fatalf("runs %v: %v", all, err)
	}
	for _, r := range all {
		raw, err := st.RunEndAttr(context.Background(), record.VerdictAttr, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusOK && raw[r.ID] != nil {
			t.Errorf("run %d ended %s, yet has a verdict: %s", r.ID, r.Status, raw[r.ID])
		}
	}
}

// TestVerdictHook: the run-end hook judges a run that ended ok against its
// baseline: the first run has none, a run twice as slow in every second is
// slower against it, with the steps behind the verdict; a run that failed
// or was aborted is not judged; a run that cannot be judged gets the
// error, not a verdict.
func TestVerdictHook(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	var logs strings.Builder
	d := &daemon{st: st, opts: Options{Log: slog.New(slog.NewTextHandler(&logs, nil))}}
	base, half, p99s := make([]float64, 10), make([]float64, 10), make([]float64, 10)
	for i := range base {
		base[i], half[i], p99s[i] = 1000+float64(i), (1000+float64(i))/2, 800
	}
	first := testruns.Reads(t, st, "reads.lua", "-- reads\n", base, p99s)
	slow := testruns.Reads(t, st, "reads.lua", "-- reads\n", half, p99s)
	for _, c := range []struct {
		run      int64
		status   string
		verdict  string // "": no verdict at all
		baseline int64
		err      string
	}{
		{first, store.StatusOK, compare.VerdictNoBaseline, 0, ""},
		{slow, store.StatusOK, compare.Slower, first, ""},
		{slow, store.StatusFailed, "", 0, ""},
		{slow, store.StatusAborted, "", 0, ""},
		{99, store.StatusOK, "", 0, "get run 99: "},
	} {
		attrs := d.verdict(ctx, schedule.RunEnd{Schedule: "reads", RunID: c.run, Status: c.status})
		v, _ := attrs[record.VerdictAttr].(compare.RunVerdict)
		switch {
		case c.err != "":
			if msg, _ := attrs["verdict_error"].(string); len(attrs) != 1 || !strings.Contains(msg, c.err) {
				t.Errorf("run %d: %v, want the error %q", c.run, attrs, c.err)
			}
		case c.verdict == "":
			if attrs != nil {
				t.Errorf("run %d ended %s: %v, want no verdict", c.run, c.status, attrs)
			}
		case len(attrs) != 1 || v.Verdict != c.verdict || v.Run != c.run || v.Baseline != c.baseline:
			t.Errorf("run %d ended %s: %v, want %s against %d", c.run, c.status, attrs, c.verdict, c.baseline)
		case c.verdict == compare.Slower && (fmt.Sprint(v.Slower) != "[reads]" || len(v.Steps) != 1 || v.Steps[0].ChangePct == nil ||
			*v.Steps[0].ChangePct > -49 || *v.Steps[0].ChangePct < -51):
			t.Errorf("run %d: slower %v, steps %+v; want reads at -50%%", c.run, v.Slower, v.Steps)
		}
	}
	if !strings.Contains(logs.String(), `msg="regression verdict" schedule=reads run=2 baseline=1 history=[] verdict=slower slower=[reads]`) {
		t.Errorf("log:\n%s", logs.String())
	}

	// With three earlier runs or more, a run is judged among them: the
	// slow run is now part of the history, and a run at the level of the
	// others is no difference, one at a third of it slower.
	level := func(f float64) []float64 {
		out := make([]float64, len(base))
		for i, b := range base {
			out[i] = b * f
		}
		return out
	}
	testruns.Reads(t, st, "reads.lua", "-- reads\n", level(1.02), p99s)
	testruns.Reads(t, st, "reads.lua", "-- reads\n", level(0.98), p99s)
	same := testruns.Reads(t, st, "reads.lua", "-- reads\n", level(1.01), p99s)
	slower := testruns.Reads(t, st, "reads.lua", "-- reads\n", level(0.3), p99s)
	for _, c := range []struct {
		run     int64
		verdict string
		history int
	}{{same, compare.NoDifference, 4}, {slower, compare.Slower, 5}} {
		v, _ := d.verdict(ctx, schedule.RunEnd{Schedule: "reads", RunID: c.run, Status: store.StatusOK})[record.VerdictAttr].(compare.RunVerdict)
		if v.Verdict != c.verdict || len(v.History) != c.history || v.History[0] != c.run-1 || !strings.HasPrefix(v.Method, "against the last") {
			t.Errorf("run %d: %s over %v (%s), want %s over %d runs", c.run, v.Verdict, v.History, v.Method, c.verdict, c.history)
		}
	}
}
