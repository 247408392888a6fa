package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/fakemongod"
)

// TestSamplingGoesOnAcrossARestart: the sampler skips the restart gap and
// samples the new process afterwards.
func TestSamplingGoesOnAcrossARestart(t *testing.T) {
	ctx := context.Background()
	r, st, log := newTestRun(t, 50*time.Millisecond)
	s, err := r.StartServer(ctx, ServerOptions{CacheSizeGB: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	firstPID := s.PID()
	gb := 0.5
	if err := s.Restart(ctx, ServerChanges{CacheSizeGB: &gb}); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	time.Sleep(400 * time.Millisecond)
	if s.PID() == firstPID {
		t.Fatalf("pid %d did not change", firstPID)
	}
	st.Flush(ctx)
	series, err := st.Series(ctx, r.ID, "server:m1", "wiredTiger.cache.maximum bytes configured")
	if err != nil {
		t.Fatal(err)
	}
	var before, after int
	for _, p := range series {
		switch {
		case p.TS.Before(restarted) && p.Value == 268435456:
			before++
		case p.TS.After(restarted) && p.Value == 536870912:
			after++
		}
	}
	if before < 3 || after < 3 {
		t.Errorf("%d samples of the 0.25 GB server and %d of the 0.5 GB one, want several of each", before, after)
	}
	// The restart gap is not a failure of the sampler.
	if strings.Contains(log.String(), "sampling server:m1 failed") {
		t.Errorf("restart reported as a sampler failure:\n%s", log.String())
	}
}

// TestSamplerFailureIsAnEvent: a server whose serverStatus fails is
// reported once as an event, the run goes on, and recovery is reported.
func TestSamplerFailureIsAnEvent(t *testing.T) {
	fake, err := fakemongod.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	var failing atomic.Bool
	fake.Handle("serverStatus", func(bson.Raw) bson.D {
		if failing.Load() {
			return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "injected failure"}, {Key: "code", Value: int32(8000)}}
		}
		return bson.D{{Key: "uptime", Value: 1.0}, {Key: "ok", Value: 1.0}}
	})
	ctx := context.Background()
	r, st, _ := newTestRun(t, 40*time.Millisecond)
	if _, err := r.ConnectServer(ctx, fake.URI(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	failing.Store(true)
	time.Sleep(300 * time.Millisecond)
	failing.Store(false)
	time.Sleep(200 * time.Millisecond)
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
