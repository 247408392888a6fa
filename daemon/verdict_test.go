package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/compare"
	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/web"
)

// TestSecondScheduledRunRecordsAVerdict: a schedule's first run ends ok
// with the verdict "no baseline", its second with a verdict against the
// first (same playbook and parameters: comparable), recorded with the
// run's end and shown by the API; a run aborted by SIGTERM gets none.
func TestSecondScheduledRunRecordsAVerdict(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "reads.lua"), []byte(`
local p = params{ docs = 1000 }
local m = mongod.start{}
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 200 } end }
step{ name = "reads", run = function() return m:workload{ ns = "t.c", duration = 4, mix = { read = 1 } } end }
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
    params: { docs: 1000 }
`, port)), 0o644)
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
	var runs []web.RunView
	deadline := time.Now().Add(90 * time.Second)
	for {
		runs = nil
		if resp, err := http.Get(api + "?status=ok"); err == nil {
			var body struct{ Runs []web.RunView }
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
		(v.Verdict != compare.NoDifference && v.Verdict != compare.Slower && v.Verdict != compare.Faster) ||
		len(v.Steps) != len(v.Slower)+len(v.Faster) {
		t.Errorf("second run %d (%s): verdict %+v, want one against run 1", second.ID, second.Trigger, v)
	}
	resp, err := http.Get(fmt.Sprintf("%s/%d", api, second.ID))
	if err != nil {
		t.Fatal(err)
	}
	var detail web.RunDetail
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
	raw, err := st.RunEndAttr(context.Background(), web.VerdictAttr, 2)
	if err != nil || !strings.Contains(string(raw[2]), `"baseline":1`) {
		t.Errorf("recorded verdict of run 2: %s %v", raw[2], err)
	}
	all, _ := st.ListRuns(context.Background(), 0)
	for _, r := range all {
		raw, _ := st.RunEndAttr(context.Background(), web.VerdictAttr, r.ID)
		if r.Status != store.StatusOK && raw[r.ID] != nil {
			t.Errorf("run %d ended %s, yet has a verdict: %s", r.ID, r.Status, raw[r.ID])
		}
	}
}
