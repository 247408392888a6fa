package store

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestPlaybookMatches(t *testing.T) {
	for _, c := range []struct {
		path, name string
		want       bool
	}{
		{"playbooks/cache_sweep.lua", "cache_sweep", true},
		{"playbooks/cache_sweep.lua", "cache_sweep.lua", true},
		{"/home/a/playbooks/cache_sweep.lua", "playbooks/cache_sweep.lua", true},
		{"playbooks/cache_sweep.lua", "", true},
		{"playbooks/cache_sweep.lua", "cache", false},
		{"playbooks/cache_sweep.lua", "other/cache_sweep.lua", false},
		{"playbooks/tickets.lua", "cache_sweep", false},
	} {
		if got := PlaybookMatches(c.path, c.name); got != c.want {
			t.Errorf("PlaybookMatches(%q, %q) = %v", c.path, c.name, got)
		}
	}
}

// TestFindPruneDelete records runs of two playbooks at known times, then
// filters, finds baselines, deletes and prunes them.
func TestFindPruneDelete(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	now := time.Now()
	mk := func(path string, daysAgo int, status string, params map[string]any) int64 {
		info := exampleRunInfo(now.Add(-time.Duration(daysAgo) * 24 * time.Hour))
		info.PlaybookPath, info.Params = path, params
		id, err := s.CreateRun(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		if status != StatusRunning {
			if err := s.FinishRun(ctx, id, status, "", info.StartedAt.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		s.AddSample(id, "host", info.StartedAt, map[string]float64{"cpu.user": 1})
		s.AddEvent(id, info.StartedAt, "info", "print", "hello", nil)
		return id
	}
	full := map[string]any{"docs": float64(600000)}
	small := map[string]any{"docs": float64(1000)}
	old := mk("playbooks/cache_sweep.lua", 40, StatusOK, full)
	a := mk("playbooks/cache_sweep.lua", 3, StatusOK, full)
	mk("playbooks/cache_sweep.lua", 2, StatusOK, small)
	mk("playbooks/tickets.lua", 2, StatusFailed, nil)
	b := mk("playbooks/cache_sweep.lua", 1, StatusFailed, full)
	c := mk("playbooks/cache_sweep.lua", 0, StatusOK, full)
	running := mk("playbooks/cache_sweep.lua", 50, StatusRunning, full)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := s.FindRuns(ctx, RunFilter{Playbook: "cache_sweep", Status: StatusOK, Since: now.Add(-10 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != c || got[2].ID != a {
		t.Errorf("FindRuns = %v", ids(got))
	}
	if r, err := s.LatestRun(ctx, "tickets"); err != nil || r.PlaybookPath != "playbooks/tickets.lua" {
		t.Errorf("LatestRun(tickets) = %d %v", r.ID, err)
	}
	if _, err := s.LatestRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LatestRun(nope) err = %v", err)
	}
	// The baseline of c skips the failed run b and the run with other
	// parameters.
	r, _ := s.GetRun(ctx, c)
	if base, err := s.PreviousOK(ctx, r); err != nil || base.ID != a {
		t.Errorf("PreviousOK(%d) = %d, %v; want %d", c, base.ID, err, a)
	}
	r, _ = s.GetRun(ctx, old)
	if _, err := s.PreviousOK(ctx, r); !errors.Is(err, ErrNotFound) {
		t.Errorf("PreviousOK(first run) err = %v", err)
	}

	if err := s.DeleteRuns(ctx, []int64{running}); !errors.Is(err, ErrRunning) {
		t.Errorf("deleting a running run: %v", err)
	}
	if err := s.DeleteRuns(ctx, []int64{b, 999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleting an unknown run: %v", err)
	}
	if _, err := s.GetRun(ctx, b); err != nil {
		t.Errorf("run %d was deleted although the call failed: %v", b, err)
	}
	if err := s.DeleteRuns(ctx, []int64{b}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, b); !errors.Is(err, ErrNotFound) {
		t.Errorf("run %d still there: %v", b, err)
	}
	for _, table := range []string{"samples", "events", "steps"} {
		var n int
		s.r.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE run_id = ?", b).Scan(&n)
		if n != 0 {
			t.Errorf("%d rows of %s left for deleted run %d", n, table, b)
		}
	}

	pruned, err := s.PruneRuns(ctx, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(pruned) != 1 || pruned[0] != old {
		t.Errorf("pruned %v, want [%d] (the running one stays)", pruned, old)
	}
	if _, err := s.GetRun(ctx, running); err != nil {
		t.Errorf("running run pruned: %v", err)
	}
	// The sample chain of a kept run still reads.
	if pts, err := s.Series(ctx, a, "host", "cpu.user"); err != nil || len(pts) != 1 {
		t.Errorf("series of a kept run: %v %v", pts, err)
	}
}

func ids(runs []Run) []int64 {
	var out []int64
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func TestSeriesSetAndMetricNames(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{KeyframeEvery: 3})
	id, err := s.CreateRun(ctx, exampleRunInfo(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range 7 {
		m := map[string]float64{"a": float64(i), "b": float64(10 * i)}
		if i == 4 {
			delete(m, "b")
			m["c"] = 1
		}
		s.AddSample(id, "server:m1", t0.Add(time.Duration(i)*time.Second), m)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cols, err := s.SeriesSet(ctx, id, "server:m1", []string{"b", "a", "never"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cols.TS) != 7 || !cols.TS[6].Equal(t0.Add(6*time.Second)) {
		t.Fatalf("times %v", cols.TS)
	}
	for j := range 7 {
		wantB := float64(10 * j)
		if j == 4 {
			if !math.IsNaN(cols.Values[0][j]) {
				t.Errorf("b[4] = %v, want NaN", cols.Values[0][j])
			}
		} else if cols.Values[0][j] != wantB {
			t.Errorf("b[%d] = %v", j, cols.Values[0][j])
		}
		if cols.Values[1][j] != float64(j) || !math.IsNaN(cols.Values[2][j]) {
			t.Errorf("a[%d] = %v, never = %v", j, cols.Values[1][j], cols.Values[2][j])
		}
	}
	names, err := s.MetricNames(ctx, id, "server:m1")
	if err != nil || len(names) != 3 || names[0] != "a" || names[2] != "c" {
		t.Errorf("MetricNames = %v %v", names, err)
	}
}
