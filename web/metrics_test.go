package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
)

// /metrics counts the thresholds of each schedule's last ended run by
// state, so that an alert can fire on a failed one.
func TestMetricsCountTheLastRunsThresholds(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "n.lua", Playbook: "--"})
	if err != nil {
		t.Fatal(err)
	}
	ths := []store.Threshold{
		{Seq: 1, Spec: json.RawMessage(`{}`), State: store.ThresholdFailed, Reason: "p99 ms of \"reads\" 7 > max 5"},
		{Seq: 2, Spec: json.RawMessage(`{}`), State: store.ThresholdPassed},
		{Seq: 3, Spec: json.RawMessage(`{}`), State: store.ThresholdPassed},
	}
	if err := st.SetThresholds(ctx, id, ths); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddScheduleEvent(ctx, store.ScheduleEvent{TS: time.Now(), Kind: store.KindSchedule, Name: "nightly", Event: "end", RunID: id}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Store: st, Scheduler: fakeScheduler{}}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, w := range []string{
		`wtd_schedule_last_run_thresholds{schedule="nightly",state="failed"} 1`,
		`wtd_schedule_last_run_thresholds{schedule="nightly",state="passed"} 2`,
		`wtd_schedule_last_run_thresholds{schedule="nightly",state="no baseline"} 0`,
	} {
		if !strings.Contains(string(body), w) {
			t.Errorf("/metrics lacks %s:\n%s", w, body)
		}
	}
}
