package schedule

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// ttlEnabled reads ttlMonitorEnabled from the server.
func ttlEnabled(t *testing.T, uri string) bool {
	t.Helper()
	v, err := GetParameter(context.Background(), uri, "ttlMonitorEnabled")
	if err != nil {
		t.Fatal(err)
	}
	b, ok := v.(bool)
	if !ok {
		t.Fatalf("ttlMonitorEnabled = %v (%T)", v, v)
	}
	return b
}

// windowConfig is a window on uri that sets ttlMonitorEnabled.
func windowConfig(cron, duration, uri, extra string) string {
	return fmt.Sprintf(`
windows:
  - name: offpeak
    cron: %q
    duration: %s
    server: %s
    open:  { setParameter: { ttlMonitorEnabled: true } }
    close: { setParameter: { ttlMonitorEnabled: false } }
%s`, cron, duration, uri, extra)
}

// nowSpec is a daily cron spec (UTC) whose last fire is the current
// minute: a daemon started now is inside a window of a few minutes.
func nowSpec() string {
	now := time.Now().UTC()
	return fmt.Sprintf("CRON_TZ=UTC %d %d * * *", now.Minute(), now.Hour())
}

// TestWindowOpensAndCloses: on a real minimongod, the window's open sets
// ttlMonitorEnabled true and its close false; each transition is recorded
// with the values read back before and after.
func TestWindowOpensAndCloses(t *testing.T) {
	srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
	f := newFixture(t)
	sv := f.serve(f.config(windowConfig("@every 2s", "1s", srv.URI, "")), nil)
	if ttlEnabled(t, srv.URI) {
		t.Fatal("ttlMonitorEnabled is true before the window")
	}
	waitUntil(t, 5*time.Second, "ttlMonitorEnabled true", func() bool { return ttlEnabled(t, srv.URI) })
	waitUntil(t, 5*time.Second, "ttlMonitorEnabled false again", func() bool { return !ttlEnabled(t, srv.URI) })
	sv.stop(t)
	evs := f.events(store.EventQuery{Kind: store.KindWindow, Name: "offpeak"})
	var open, close *store.ScheduleEvent
	for i := range evs {
		switch evs[i].Event {
		case "open":
			open = &evs[i]
		case "close":
			close = &evs[i]
		}
	}
	if open == nil || close == nil {
		t.Fatalf("window events: %+v", evs)
	}
	if b, a := open.Attrs["before"].(map[string]any), open.Attrs["after"].(map[string]any); b["ttlMonitorEnabled"] != false || a["ttlMonitorEnabled"] != true {
		t.Errorf("open: %+v", open.Attrs)
	}
	if b, a := close.Attrs["before"].(map[string]any), close.Attrs["after"].(map[string]any); b["ttlMonitorEnabled"] != true || a["ttlMonitorEnabled"] != false {
		t.Errorf("close: %+v", close.Attrs)
	}
	if !strings.Contains(f.log.String(), `msg="window open"`) || !strings.Contains(f.log.String(), `msg="window close"`) {
		t.Errorf("log lacks the transitions:\n%s", f.log)
	}
}

// TestWindowOpensAtStartAndClosesOnStop: a daemon started inside a window
// opens it at once; SIGTERM closes it first, unless leave_open.
func TestWindowOpensAtStartAndClosesOnStop(t *testing.T) {
	for _, leave := range []bool{false, true} {
		t.Run(fmt.Sprintf("leave_open=%v", leave), func(t *testing.T) {
			srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
			f := newFixture(t)
			extra := ""
			if leave {
				extra = "    leave_open: true\n"
			}
			sv := f.serve(f.config(windowConfig(nowSpec(), "10m", srv.URI, extra)), nil)
			waitUntil(t, 5*time.Second, "the window opened at start", func() bool {
				_, w := sv.s.Status(1)
				return ttlEnabled(t, srv.URI) && len(w) == 1 && w[0].Open
			})
			_, wins := sv.s.Status(1)
			if len(wins) != 1 || !wins[0].Open || !wins[0].Wanted || wins[0].ClosesAt == nil {
				t.Errorf("status: %+v", wins)
			}
			sv.stop(t)
			if got := ttlEnabled(t, srv.URI); got != leave {
				t.Errorf("after SIGTERM ttlMonitorEnabled = %v, want %v", got, leave)
			}
			closes := f.events(store.EventQuery{Kind: store.KindWindow, Events: []string{"close"}})
			if leave != (len(closes) == 0) {
				t.Errorf("close events: %+v", closes)
			}
		})
	}
}

// TestFailedTransitionIsRetried: a window whose server is down fails to
// open, says so in its status, and is retried with growing waits until
// the server answers.
func TestFailedTransitionIsRetried(t *testing.T) {
	port := testbin.FreePort(t)
	uri := fmt.Sprintf("mongodb://127.0.0.1:%d", port)
	f := newFixture(t)
	sv := f.serve(f.config(windowConfig(nowSpec(), "10m", uri, "")), nil)
	waitUntil(t, 5*time.Second, "three failed attempts", func() bool {
		return len(f.events(store.EventQuery{Kind: store.KindWindow, Events: []string{"open-failed"}})) >= 3
	})
	_, wins := sv.s.Status(1)
	if len(wins) != 1 || !wins[0].Failing || wins[0].Open || !strings.Contains(wins[0].Error, "connection refused") || wins[0].RetryAt == nil {
		t.Errorf("status while failing: %+v", wins)
	}
	fails := f.events(store.EventQuery{Kind: store.KindWindow, Events: []string{"open-failed"}})
	gap1 := fails[len(fails)-2].TS.Sub(fails[len(fails)-1].TS)
	gap2 := fails[len(fails)-3].TS.Sub(fails[len(fails)-2].TS)
	if gap1 < 80*time.Millisecond || gap2 < gap1 {
		t.Errorf("waits between attempts %s, %s: want at least 100 ms, growing", gap1, gap2)
	}
	srv := testbin.StartMinimongod(t, port, "--setParameter", "ttlMonitorEnabled=false")
	// The parameter is set before the transition is read back and recorded:
	// wait for both.
	waitUntil(t, 5*time.Second, "the window open once the server is up", func() bool {
		_, w := sv.s.Status(1)
		return ttlEnabled(t, srv.URI) && len(w) == 1 && w[0].Open
	})
	_, wins = sv.s.Status(1)
	if wins[0].Failing || !wins[0].Open || wins[0].Last == nil {
		t.Errorf("status after the retry: %+v", wins[0])
	}
	sv.stop(t)
	if ttlEnabled(t, srv.URI) {
		t.Error("the window was left open at stop")
	}
}
