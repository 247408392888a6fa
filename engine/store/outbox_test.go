package store

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHostIDIsKeptAndDiffersBetweenDatabases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := openTest(t, filepath.Join(dir, "a.db"), Options{})
	b := openTest(t, filepath.Join(dir, "b.db"), Options{})
	ida, err := a.HostID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idb, err := b.HostID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(ida) || ida == idb {
		t.Fatalf("host ids %q and %q: want two different sets of 12 hex digits", ida, idb)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again := openTest(t, filepath.Join(dir, "a.db"), Options{})
	if id, err := again.HostID(ctx); err != nil || id != ida {
		t.Fatalf("reopened: host id %q (%v), want %q", id, err, ida)
	}
}

func TestOutboxQueuesRetriesAndAcknowledges(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	t0 := time.Now().Add(-time.Hour)
	ended, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, ended, StatusOK, "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	going, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "b.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.QueuePush(ctx, ended, going); err != nil {
		t.Fatal(err)
	}
	due := func(at time.Time) []int64 {
		t.Helper()
		ps, err := s.PushesDue(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, p := range ps {
			ids = append(ids, p.RunID)
		}
		return ids
	}
	now := time.Now()
	if got := due(now); !cmp.Equal(got, []int64{ended}) {
		t.Fatalf("due now: %v, want only the ended run %d (run %d goes on)", got, ended, going)
	}
	next := now.Add(10 * time.Second)
	if err := s.PushFailed(ctx, ended, "connect mongodb://u:secret@127.0.0.1:1: connection refused", next); err != nil {
		t.Fatal(err)
	}
	if got := due(now); len(got) != 0 {
		t.Fatalf("due right after a failure: %v, want none before %v", got, next)
	}
	if got := due(next); !cmp.Equal(got, []int64{ended}) {
		t.Fatalf("due at the retry: %v, want [%d]", got, ended)
	}
	ps, err := s.Pushes(ctx, ended)
	if err != nil {
		t.Fatal(err)
	}
	p := ps[ended]
	if p.Attempts != 1 || !p.Waiting() || p.LastError != "connect mongodb://u:xxxxx@127.0.0.1:1: connection refused" {
		t.Fatalf("after a failure: %+v", p)
	}
	if err := s.PushDone(ctx, ended, "mongodb://u:secret@127.0.0.1:2 wtd", now); err != nil {
		t.Fatal(err)
	}
	if got := due(next); len(got) != 0 {
		t.Fatalf("due after the push: %v, want none", got)
	}
	ps, err = s.Pushes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := ps[ended]; p.Waiting() || p.Dest != "mongodb://u:xxxxx@127.0.0.1:2 wtd" || len(ps) != 2 || !ps[going].Waiting() {
		t.Fatalf("after the push: %+v", ps)
	}
	// Queued again, it waits again; deleted, it leaves the outbox.
	if err := s.QueuePush(ctx, ended); err != nil {
		t.Fatal(err)
	}
	if got := due(time.Now()); !cmp.Equal(got, []int64{ended}) {
		t.Fatalf("queued again: due %v, want [%d]", got, ended)
	}
	if err := s.DeleteRuns(ctx, []int64{ended}); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.Pushes(ctx, ended); err != nil || len(ps) != 0 {
		t.Fatalf("deleted run's outbox entry: %v (%v)", ps, err)
	}
}

func TestFramesDecodeToTheSamples(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{KeyframeEvery: 7, BlockSamples: 20})
	t0 := time.Unix(1700000000, 0)
	run, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	sources := []string{"host", "server:m1"}
	for i, src := range sources {
		for k, m := range sampleStream(uint64(i), 53, 30) {
			s.AddSample(run, src, t0.Add(time.Duration(k)*time.Second), m)
		}
	}
	if err := s.FinishRun(ctx, run, StatusOK, "", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	bySource := map[string][]Frame{}
	total := 0
	names, err := s.Frames(ctx, run, func(f Frame) error {
		f.Data = append([]byte(nil), f.Data...)
		bySource[f.Source] = append(bySource[f.Source], f)
		total += f.Samples
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2*53 {
		t.Errorf("frames hold %d samples, want %d", total, 2*53)
	}
	for _, src := range sources {
		if len(bySource[src]) < 3 {
			t.Errorf("%s: %d frames, want blocks of 20 and the rest", src, len(bySource[src]))
		}
		want, err := s.Samples(ctx, run, src, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeFrames(bySource[src], names)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got, cmpSamples); d != "" {
			t.Errorf("%s decoded from its frames (-store +frames):\n%s", src, d)
		}
	}
}

func TestPushesOfManyRuns(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	var ids []int64
	for i := range 1200 {
		id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "a.lua", StartedAt: time.Unix(1700000000+int64(i), 0)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.QueuePush(ctx, ids[:1100]...); err != nil {
		t.Fatal(err)
	}
	ps, err := s.Pushes(ctx, ids...)
	if err != nil || len(ps) != 1100 {
		t.Fatalf("pushes of 1200 runs, 1100 queued: %d (%v)", len(ps), err)
	}
	if _, ok := ps[ids[1099]]; !ok {
		t.Errorf("the last one queued is missing")
	}
}
