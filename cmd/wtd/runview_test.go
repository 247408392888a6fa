package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/web"
)

// TestShowJSONIsTheAPIsRun: wtd show --json and GET /api/v1/runs/{id} print
// the same document of a run, and wtd runs --json the same runs as GET
// /api/v1/runs: for ended runs (one with a recorded verdict) and for a run
// going on, whose ended_at and duration_s are null in both.
func TestShowJSONIsTheAPIsRun(t *testing.T) {
	fx := recordedRuns(t)
	db := copyDB(t, fx.db)
	ctx := context.Background()
	st := openDB(t, db)
	verdict := map[string]any{"run": 2, "baseline": 1, "verdict": "no difference", "alpha": 0.05, "test": "mwu"}
	if _, err := st.AddScheduleEvent(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: "a", Event: "end", RunID: 2,
		Attrs: map[string]any{"status": "ok", record.VerdictAttr: verdict}}); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Minute)
	going, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "going.lua", Playbook: "-- going", StartedAt: started,
		Params: map[string]any{"docs": 10.0}, Trigger: "cli", WtdVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStep(ctx, store.StepInfo{RunID: going, Name: "reads", Labels: map[string]any{"round": 1.0},
		StartedAt: started.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	st.AddEvent(going, started.Add(2*time.Second), "INFO", "playbook", "going on", map[string]any{"n": 1.0})
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(web.New(web.Options{Store: st}))
	t.Cleanup(api.Close)
	get := func(path string) any {
		t.Helper()
		resp, err := http.Get(api.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return decodeJSON(t, "GET "+path, string(body))
	}
	cli := func(args ...string) any {
		t.Helper()
		res := runCLI(t, nil, append([]string{"--db", db}, args...)...)
		if res.code != 0 {
			t.Fatalf("wtd %v: exit %d\n%s", args, res.code, res.stderr)
		}
		return decodeJSON(t, fmt.Sprint("wtd ", args), res.stdout)
	}

	for _, id := range []int64{1, 2, going} {
		shown := cli("show", "--json", fmt.Sprint(id))
		if d := cmp.Diff(shown, get(fmt.Sprintf("/api/v1/runs/%d", id))); d != "" {
			t.Errorf("run %d: wtd show --json (-) and GET /api/v1/runs/%d (+) differ:\n%s", id, id, d)
		}
		run := shown.(map[string]any)["run"].(map[string]any)
		ended := id != going
		if (run["ended_at"] != nil) != ended || (run["duration_s"] != nil) != ended {
			t.Errorf("run %d: ended_at %v, duration_s %v; want them null only while it goes on", id, run["ended_at"], run["duration_s"])
		}
		if _, ok := run["reason"]; !ok || run["reason"] != nil {
			t.Errorf("run %d: reason %v (present %v), want null", id, run["reason"], ok)
		}
		if v, _ := run["verdict"].(map[string]any); (v != nil) != (id == 2) || (v != nil && v["verdict"] != "no difference") {
			t.Errorf("run %d: verdict %v", id, run["verdict"])
		}
		if host, ok := run["host"].(map[string]any); !ok || (ended && host["cores"] == nil) {
			t.Errorf("run %d: host %v", id, run["host"])
		}
	}
	doc := cli("show", "--json", fmt.Sprint(going)).(map[string]any)
	steps := doc["steps"].([]any)
	if len(steps) != 1 || steps[0].(map[string]any)["duration_s"] != nil || steps[0].(map[string]any)["ended_at"] != nil {
		t.Errorf("the step going on: %v, want its ended_at and duration_s null", steps)
	}

	listed := get("/api/v1/runs").(map[string]any)["runs"]
	if d := cmp.Diff(cli("runs", "--json", "--limit", "0"), listed); d != "" {
		t.Errorf("wtd runs --json (-) and GET /api/v1/runs (+) differ:\n%s", d)
	}
	if n := len(listed.([]any)); n != 4 {
		t.Errorf("GET /api/v1/runs lists %d runs, want 4", n)
	}
}

func decodeJSON(t *testing.T, what, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, text)
	}
	return v
}
