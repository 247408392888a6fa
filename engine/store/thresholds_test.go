package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Thresholds read back as recorded (a value not measured stays null), a
// run's deletion takes them along, and the schedules' last ended runs'
// thresholds are counted by state.
func TestThresholdsRecordedAndCounted(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	run := func() int64 {
		id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "n.lua", Playbook: "--"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	v, lim, base := 7.5, 5.0, 3.0
	baseRun := int64(1)
	older, newer, other := run(), run(), run()
	failed := []Threshold{
		{Seq: 1, Spec: json.RawMessage(`{"step":"reads","measure":"p99","max":5}`), Unit: "p99 ms", Value: &v, Limit: &lim, State: ThresholdFailed, Reason: "too slow"},
		{Seq: 2, Spec: json.RawMessage(`{"step":"gone","measure":"p99","max":5}`), Unit: "p99 ms", Limit: &lim, State: ThresholdFailed, Reason: "not measured"},
		{Seq: 3, Spec: json.RawMessage(`{"step":"reads","measure":"p99","vs_baseline":"+10%"}`), Unit: "p99 ms", Value: &v, BaselineRun: &baseRun, Baseline: &base, State: ThresholdPassed, Reason: "ok"},
	}
	for id, ths := range map[int64][]Threshold{older: failed[:1], newer: failed, other: {{Seq: 1, Spec: json.RawMessage(`{}`), State: ThresholdNoBaseline}}} {
		if err := s.SetThresholds(ctx, id, ths); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Thresholds(ctx, newer)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(failed, got); d != "" {
		t.Errorf("thresholds read back (-recorded +read):\n%s", d)
	}
	for i, ev := range []struct {
		name string
		run  int64
	}{{"nightly", older}, {"nightly", newer}, {"hourly", other}} {
		if _, err := s.AddScheduleEvent(ctx, ScheduleEvent{TS: time.Unix(int64(i), 0), Kind: KindSchedule, Name: ev.name, Event: "end", RunID: ev.run}); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := s.LastRunThresholds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int64{"nightly": {ThresholdFailed: 2, ThresholdPassed: 1}, "hourly": {ThresholdNoBaseline: 1}}
	if d := cmp.Diff(want, counts); d != "" {
		t.Errorf("last runs' thresholds (-want +got):\n%s", d)
	}
	if err := s.FinishRun(ctx, newer, StatusFailed, "thresholds", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRuns(ctx, []int64{newer}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Thresholds(ctx, newer); err != nil || len(got) != 0 {
		t.Errorf("thresholds of a deleted run: %v %v", got, err)
	}
}
