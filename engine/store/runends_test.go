package store

import (
	"context"
	"testing"
	"time"
)

// TestRunEndAttr: the attribute recorded with a run's end event is read
// back as JSON for the runs asked about; runs without an end, or whose end
// lacks the key, are absent.
func TestRunEndAttr(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	var ids []int64
	for range 3 {
		id, err := s.CreateRun(ctx, exampleRunInfo(time.Unix(1700000000, 0)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, ev := range []ScheduleEvent{
		{Kind: KindSchedule, Name: "n", Event: "fire", RunID: ids[0], Attrs: map[string]any{"verdict": "not an end"}},
		{Kind: KindSchedule, Name: "n", Event: "end", RunID: ids[0], Attrs: map[string]any{"status": "ok",
			"verdict": map[string]any{"verdict": "slower", "baseline": 7, "slower": []string{"reads"}}}},
		{Kind: KindSchedule, Name: "n", Event: "end", RunID: ids[1], Attrs: map[string]any{"status": "failed"}},
	} {
		if _, err := s.AddScheduleEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RunEndAttr(ctx, "verdict", ids...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[ids[0]]) != `{"baseline":7,"slower":["reads"],"verdict":"slower"}` {
		t.Errorf("verdicts: %d runs, run %d: %s", len(got), ids[0], got[ids[0]])
	}
	if got, err := s.RunEndAttr(ctx, "verdict"); err != nil || len(got) != 0 {
		t.Errorf("no runs: %v %v", got, err)
	}
	if pbs, err := s.Playbooks(ctx); err != nil || len(pbs) != 1 || pbs[0] != exampleRunInfo(time.Now()).PlaybookPath {
		t.Errorf("playbooks: %q %v", pbs, err)
	}
}
