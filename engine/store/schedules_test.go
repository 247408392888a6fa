package store

import (
	"context"
	"testing"
	"time"
)

func TestScheduleEventsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	runID, err := s.CreateRun(ctx, exampleRunInfo(time.Unix(1700000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1700000100, 0)
	for i, ev := range []ScheduleEvent{
		{Kind: KindSchedule, Name: "nightly", Event: "fire", RunID: runID},
		{Kind: KindSchedule, Name: "nightly", Event: "skip", Detail: "run 1 of x.lua (pid 1) holds the lock"},
		{Kind: KindSchedule, Name: "other", Event: "skip"},
		{Kind: KindWindow, Name: "offpeak", Event: "open", Detail: "mongodb://u:secret@127.0.0.1:1",
			Attrs: map[string]any{"before": map[string]any{"ttlMonitorEnabled": false}}},
		{Kind: KindSchedule, Name: "nightly", Event: "skip"},
	} {
		ev.TS = base.Add(time.Duration(i) * time.Second)
		if _, err := s.AddScheduleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ScheduleEvents(ctx, EventQuery{Kind: KindSchedule, Name: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Event != "skip" || got[2].Event != "fire" || got[2].RunID != runID || got[1].Detail == "" {
		t.Fatalf("nightly's events, newest first: %+v", got)
	}
	got, _ = s.ScheduleEvents(ctx, EventQuery{Kind: KindSchedule, Events: []string{"fire", "end"}, Limit: 5})
	if len(got) != 1 || got[0].Name != "nightly" {
		t.Errorf("fire/end events: %+v", got)
	}
	got, _ = s.ScheduleEvents(ctx, EventQuery{Since: base.Add(3 * time.Second)})
	if len(got) != 2 {
		t.Errorf("events since +3s: %+v", got)
	}
	win, _ := s.ScheduleEvents(ctx, EventQuery{Kind: KindWindow})
	if len(win) != 1 || win[0].Detail != "mongodb://u:xxxxx@127.0.0.1:1" || win[0].Attrs["before"].(map[string]any)["ttlMonitorEnabled"] != false {
		t.Errorf("window event: %+v", win)
	}
	skips, err := s.CountScheduleEvents(ctx, KindSchedule, "skip")
	if err != nil || skips["nightly"] != 2 || skips["other"] != 1 {
		t.Errorf("skips = %v, %v", skips, err)
	}
}

func TestFindRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	dead := deadPID(t)
	add := func(path, trigger, status string, pid int) int64 {
		info := exampleRunInfo(time.Unix(1700000000, 0))
		info.PlaybookPath, info.Trigger, info.OwnerPID = path, trigger, pid
		id, err := s.CreateRun(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		if status != StatusRunning {
			if err := s.FinishRun(ctx, id, status, "", time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	a := add("a.lua", "cli", StatusOK, 0)
	b := add("b.lua", "schedule n", StatusFailed, 0)
	c := add("a.lua", "api", StatusOK, 0)
	d := add("a.lua", "cli", StatusRunning, dead) // its owner died: reads aborted
	e := add("b.lua", "cli", StatusRunning, 0)
	ids := func(f RunFilter) []int64 {
		runs, err := s.FindRuns(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		f    RunFilter
		want []int64
	}{
		{RunFilter{}, []int64{e, d, c, b, a}},
		{RunFilter{Playbook: "a.lua"}, []int64{d, c, a}},
		{RunFilter{Playbook: "a.lua", Status: StatusOK, Limit: 1}, []int64{c}},
		{RunFilter{Status: StatusAborted}, []int64{d}},
		{RunFilter{Status: StatusRunning}, []int64{e}},
		{RunFilter{Trigger: "schedule n"}, []int64{b}},
		{RunFilter{Limit: 2}, []int64{e, d}},
	} {
		if got := ids(tc.f); !equalIDs(got, tc.want) {
			t.Errorf("FindRuns(%+v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	if _, err := s.FindRuns(ctx, RunFilter{Status: "done"}); err == nil {
		t.Error("FindRuns took status done")
	}
	counts, err := s.RunCounts(ctx)
	if err != nil || counts[StatusOK] != 2 || counts[StatusFailed] != 1 || counts[StatusAborted] != 1 || counts[StatusRunning] != 1 {
		t.Errorf("RunCounts = %v, %v", counts, err)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
