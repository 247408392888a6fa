package schedule

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// param reads an integer server parameter.
func param(t *testing.T, uri, name string) int64 {
	t.Helper()
	v, err := GetParameter(context.Background(), uri, name)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := v.(int64)
	if !ok {
		t.Fatalf("%s = %v (%T)", name, v, v)
	}
	return n
}

// windowEvents returns the window events of the history in the order they
// happened, each as "EVENT WHY" (the detail of a transition is why it was
// made; that of a failed one is the error, and why is an attribute).
func (f *fixture) windowEvents() []string {
	evs := f.events(store.EventQuery{Kind: store.KindWindow})
	out := make([]string, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		why := evs[i].Detail
		if strings.HasSuffix(evs[i].Event, "-failed") {
			why = fmt.Sprint(evs[i].Attrs["why"])
		}
		out = append(out, evs[i].Event+" "+why)
	}
	return out
}

// TestReloadOfAnOpenWindow: a reload whose config drops an open window
// closes it; one that changes it closes it and opens the new definition if
// the daemon is inside it; one that keeps it unchanged keeps its state (it
// closes at its end). An open window marked leave_open is left as it is.
// On a real minimongod, on the test's clock: the window opens at 12:00 for
// 10 minutes, the daemon starts at 12:03 and reloads at once.
func TestReloadOfAnOpenWindow(t *testing.T) {
	const noon, night = "CRON_TZ=UTC 0 12 * * *", "CRON_TZ=UTC 0 3 * * *"
	start := time.Date(2030, 1, 15, 12, 3, 0, 0, time.UTC)
	window := func(uri, cron string, sleep int, leaveOpen bool) string {
		return fmt.Sprintf(`
windows:
  - name: offpeak
    cron: %q
    duration: 10m
    server: %s
    open:  { setParameter: { ttlMonitorEnabled: true, ttlMonitorSleepSecs: %d } }
    close: { setParameter: { ttlMonitorEnabled: false, ttlMonitorSleepSecs: 60 } }
    leave_open: %v
`, cron, uri, sleep, leaveOpen)
	}
	srv := testbin.StartMinimongod(t, 0)
	const opened, reloaded, reopened, ends = "open daemon starts inside the window", "close config reloaded",
		"open config reloaded inside the window", "close window closes"
	for _, tc := range []struct {
		name      string
		leaveOpen bool
		// next is the new config's window: cron and open's sleep ("": none).
		nextCron  string
		nextSleep int
		// What the reload does, then the end of the old window at 12:10.
		atReload, atEnd []string
		wantTTL         bool
		wantSleep       int64
		wantOpen        bool
	}{
		{"dropped", false, "", 0, []string{reloaded}, nil, false, 60, false},
		{"changed, the daemon inside", false, noon, 7, []string{reloaded, reopened}, []string{ends}, true, 7, true},
		{"changed, the daemon outside", false, night, 5, []string{reloaded}, nil, false, 60, false},
		{"unchanged", false, noon, 5, nil, []string{ends}, true, 5, true},
		{"dropped, leave_open", true, "", 0, nil, nil, true, 5, false},
		{"changed, leave_open, the daemon inside", true, noon, 7, []string{reopened}, []string{ends}, true, 7, true},
		{"changed, leave_open, the daemon outside", true, night, 5, nil, nil, true, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := []Param{{Name: "ttlMonitorEnabled", Value: false}, {Name: "ttlMonitorSleepSecs", Value: int64(60)}}
			if _, err := applyParams(context.Background(), srv.URI, closed); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t)
			c := &clock{t: start}
			s := f.startAt(f.config(window(srv.URI, noon, 5, tc.leaveOpen)), c)
			if !ttlEnabled(t, srv.URI) || param(t, srv.URI, "ttlMonitorSleepSecs") != 5 {
				t.Fatalf("the window did not open at start: %v", f.windowEvents())
			}
			next := "schedules:\n  - name: tick\n    cron: \"@daily\"\n    playbook: tick.lua\n"
			if tc.nextCron != "" {
				next += window(srv.URI, tc.nextCron, tc.nextSleep, tc.leaveOpen)
			}
			s.Reload(context.Background(), f.config(next))
			want := append([]string{opened}, tc.atReload...)
			if got := f.windowEvents(); !slices.Equal(got, want) {
				t.Errorf("window events at the reload %q, want %q", got, want)
			}
			if ttl, sleep := ttlEnabled(t, srv.URI), param(t, srv.URI, "ttlMonitorSleepSecs"); ttl != tc.wantTTL || sleep != tc.wantSleep {
				t.Errorf("after the reload ttlMonitorEnabled %v, ttlMonitorSleepSecs %d; want %v, %d", ttl, sleep, tc.wantTTL, tc.wantSleep)
			}
			_, wins := s.Status(1)
			if tc.nextCron == "" && len(wins) != 0 {
				t.Errorf("windows after the reload dropped it: %+v", wins)
			}
			if tc.nextCron != "" && (len(wins) != 1 || wins[0].Open != tc.wantOpen || wins[0].Wanted != tc.wantOpen) {
				t.Errorf("windows after the reload: %+v, want open %v", wins, tc.wantOpen)
			}
			c.set(start.Add(7 * time.Minute))
			s.tick(context.Background(), c.now())
			want = append(want, tc.atEnd...)
			if got := f.windowEvents(); !slices.Equal(got, want) {
				t.Errorf("window events at 12:10 %q, want %q", got, want)
			}
		})
	}
}

// TestReloadRetriesAFailedClose: a close that fails at a reload (the
// server hangs: SIGSTOP) is retried with backoff like any transition, and
// shown as failing meanwhile; a changed window on the same server opens
// only once its old definition is closed, so that the retried close cannot
// undo the new opening.
func TestReloadRetriesAFailedClose(t *testing.T) {
	reload := time.Date(2030, 1, 15, 12, 3, 0, 0, time.UTC)
	// tick is a tick of the scheduler after the reload, with the server
	// hanging or answering, and the window events it adds.
	type tick struct {
		after  time.Duration
		hung   bool
		events []string
	}
	for _, tc := range []struct {
		name string
		// The new config's window: its cron and open's ttlMonitorSleepSecs
		// ("": dropped).
		nextCron  string
		nextSleep int
		ticks     []tick
		wantTTL   bool
		wantSleep int64
	}{
		{"dropped", "", 0, []tick{{2 * time.Second, false, []string{"close retry 1"}}}, false, 60},
		{"changed, the daemon inside", "CRON_TZ=UTC 0 12 * * *", 7,
			[]tick{{2 * time.Second, false, []string{"close retry 1", "open config reloaded inside the window"}}}, true, 7},
		{"changed, the new opening comes while the close fails", "CRON_TZ=UTC 5 12 * * *", 7, []tick{
			{2 * time.Minute, true, []string{"close-failed retry 1"}},
			{2*time.Minute + 2*time.Second, false, []string{"close retry 2", "open window opens"}}}, true, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testbin.StartMinimongod(t, 0, "--setParameter", "ttlMonitorEnabled=false")
			pid := srv.Cmd.Process.Pid
			hang := func(hung bool) {
				t.Helper()
				sig := syscall.SIGCONT
				if hung {
					sig = syscall.SIGSTOP
				}
				if err := syscall.Kill(pid, sig); err != nil {
					t.Fatal(err)
				}
				// A signal stops the threads when each next runs.
				waitUntil(t, 10*time.Second, fmt.Sprintf("every thread of the server stopped %v", hung), func() bool {
					return allStopped(pid) == hung
				})
			}
			t.Cleanup(func() { hang(false) })
			f := newFixture(t)
			f.applyTimeout = 2 * time.Second
			c := &clock{t: reload}
			window := func(cron string, sleep int) string {
				return fmt.Sprintf(`
windows:
  - name: offpeak
    cron: %q
    duration: 10m
    server: %s
    open:  { setParameter: { ttlMonitorEnabled: true, ttlMonitorSleepSecs: %d } }
    close: { setParameter: { ttlMonitorEnabled: false, ttlMonitorSleepSecs: 60 } }
`, cron, srv.URI, sleep)
			}
			s := f.startAt(f.config(window("CRON_TZ=UTC 0 12 * * *", 5)), c)
			if !ttlEnabled(t, srv.URI) {
				t.Fatalf("the window did not open at start: %v", f.windowEvents())
			}
			next := "schedules: []\n"
			if tc.nextCron != "" {
				next = window(tc.nextCron, tc.nextSleep)
			}
			hang(true)
			s.Reload(context.Background(), f.config(next))
			want := []string{"open daemon starts inside the window", "close-failed config reloaded"}
			if got := f.windowEvents(); !slices.Equal(got, want) {
				t.Errorf("window events at the reload %q, want %q", got, want)
			}
			_, wins := s.Status(1)
			if len(wins) != 1 || wins[0].Name != "offpeak" || !wins[0].Failing || wins[0].RetryAt == nil || !strings.Contains(wins[0].Error, "within") {
				t.Errorf("windows while the close fails: %+v, want offpeak failing", wins)
			}
			for _, tk := range tc.ticks {
				hang(tk.hung)
				c.set(reload.Add(tk.after))
				s.tick(context.Background(), c.now())
				want = append(want, tk.events...)
				if got := f.windowEvents(); !slices.Equal(got, want) {
					t.Fatalf("window events at %s: %q, want %q", c.now().Format(time.TimeOnly), got, want)
				}
			}
			if ttl, sleep := ttlEnabled(t, srv.URI), param(t, srv.URI, "ttlMonitorSleepSecs"); ttl != tc.wantTTL || sleep != tc.wantSleep {
				t.Errorf("at the end ttlMonitorEnabled %v, ttlMonitorSleepSecs %d; want %v, %d", ttl, sleep, tc.wantTTL, tc.wantSleep)
			}
			_, wins = s.Status(1)
			if tc.nextCron == "" && len(wins) != 0 || tc.nextCron != "" && (len(wins) != 1 || wins[0].Failing || !wins[0].Open) {
				t.Errorf("windows at the end: %+v", wins)
			}
		})
	}
}

// allStopped reports whether every thread of process pid is stopped by a
// signal (state T in /proc/PID/task/TID/stat).
func allStopped(pid int) bool {
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return len(stats) > 0
}
