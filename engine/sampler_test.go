package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/hostctl"
	"wtd/internal/fakemongod"
)

// TestSamplingGoesOnAcrossARestart: the sampler skips the restart gap and
// samples the new process afterwards.
func TestSamplingGoesOnAcrossARestart(t *testing.T) {
	ctx := context.Background()
	r, st, log := newTestRun(t, 50*time.Millisecond)
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	// samplesOf counts the samples of the server's cache size that are
	// before (or after) at.
	samplesOf := func(cache float64, before bool, at time.Time) int {
		st.Flush(ctx)
		series, err := st.Series(ctx, r.ID, "server:m1", "wiredTiger.cache.maximum bytes configured")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range series {
			if p.Value == cache && p.TS.Before(at) == before {
				n++
			}
		}
		return n
	}
	pollUntil(t, 30*time.Second, "3 samples of the 0.25 GB server", func() bool { return samplesOf(268435456, true, time.Now()) >= 3 })
	firstPID := s.PID()
	gb := 0.5
	if err := s.Restart(ctx, changing(hostctl.Settings{CacheSizeGB: gb})); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if s.PID() == firstPID {
		t.Fatalf("pid %d did not change", firstPID)
	}
	pollUntil(t, 30*time.Second, "3 samples of the restarted 0.5 GB server", func() bool { return samplesOf(536870912, false, restarted) >= 3 })
	// The restart gap is not a failure of the sampler.
	if strings.Contains(log.String(), "sampling server:m1 failed") {
		t.Errorf("restart reported as a sampler failure:\n%s", log.String())
	}
}

// TestSamplerFailureIsAnEvent: a server whose serverStatus fails is
// reported once as an event, the run goes on, and recovery is reported.
// The test waits for the sampler's requests: several that succeed, then
// several that fail, then several that succeed again.
func TestSamplerFailureIsAnEvent(t *testing.T) {
	fake, err := fakemongod.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	var failing atomic.Bool
	var served [2]atomic.Int64 // serverStatus replies: [0] ok, [1] failed
	fake.Handle("serverStatus", func(bson.Raw) bson.D {
		if failing.Load() {
			served[1].Add(1)
			return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "injected failure"}, {Key: "code", Value: int32(8000)}}
		}
		served[0].Add(1)
		return bson.D{{Key: "uptime", Value: 1.0}, {Key: "ok", Value: 1.0}}
	})
	ctx := context.Background()
	r, st, _ := newTestRun(t, 40*time.Millisecond)
	if _, err := r.ConnectServer(ctx, fake.URI(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	// served reaches n replies of kind i; the sampler asks one at a time, so
	// all but the last have been noted by then.
	reach := func(i int, n int64, what string) {
		pollUntil(t, 30*time.Second, what, func() bool { return served[i].Load() >= n })
	}
	reach(0, 5, "5 samples")
	failing.Store(true)
	reach(1, 4, "4 failing samples")
	failing.Store(false)
	ok := served[0].Load()
	reach(0, ok+6, "6 samples after the failures")
	st.Flush(ctx)
	events, err := st.Events(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var failed, again int
	for _, e := range events {
		if e.Source != "sampler" {
			continue
		}
		switch {
		case strings.HasPrefix(e.Message, "sampling server:m1 failed: ") && strings.Contains(e.Message, "injected failure") && e.Level == "warn":
			failed++
		case e.Message == "sampling server:m1 works again":
			again++
		}
	}
	if failed != 1 || again != 1 {
		t.Errorf("%d failure and %d recovery events, want one each: %+v", failed, again, events)
	}
	n, _ := st.SampleCount(ctx, r.ID)
	if n < 10 {
		t.Errorf("only %d samples: sampling stopped", n)
	}
}
