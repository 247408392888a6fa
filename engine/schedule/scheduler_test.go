package schedule

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/hostctl"
)

const everySecond = `
schedules:
  - name: tick
    cron: "@every 1s"
    playbook: tick.lua
`

// TestRunsFireWithTheirTrigger: a schedule fires on its spec; each run is
// recorded with the trigger "schedule NAME", and the history has a fire
// and an end for it.
func TestRunsFireWithTheirTrigger(t *testing.T) {
	f := newFixture(t)
	sv := f.serve(f.config(everySecond), nil)
	waitUntil(t, 10*time.Second, "two ended runs", func() bool {
		return len(f.events(store.EventQuery{Kind: store.KindSchedule, Events: []string{"end"}})) >= 2
	})
	sv.stop(t)
	runs := f.runs()
	if len(runs) < 2 {
		t.Fatalf("runs = %+v", runs)
	}
	for _, r := range runs {
		if r.Trigger != "schedule tick" || r.Status != store.StatusOK || !strings.HasSuffix(r.PlaybookPath, "/tick.lua") {
			t.Errorf("run %d: trigger %q, status %s, playbook %s", r.ID, r.Trigger, r.Status, r.PlaybookPath)
		}
	}
	fires := f.events(store.EventQuery{Name: "tick", Events: []string{"fire"}})
	if len(fires) != len(runs) || fires[0].RunID != runs[0].ID {
		t.Errorf("fires %+v for runs %+v", fires, runs)
	}
	ends := f.events(store.EventQuery{Name: "tick", Events: []string{"end"}})
	if len(ends) == 0 || ends[0].Attrs["status"] != "ok" || ends[0].Attrs["trigger"] != "schedule tick" {
		t.Errorf("ends = %+v", ends)
	}
	if !strings.Contains(f.log.String(), "msg=fire schedule=tick") || !strings.Contains(f.log.String(), "msg=\"run end\"") {
		t.Errorf("log lacks fire and run end lines:\n%s", f.log)
	}
}

// TestLongRunMakesTheNextFireASkip: a run that outlasts the interval makes
// the next fires skips, recorded with the reason; runs never overlap.
// Another experiment holding the host's lock makes a skip too, naming it.
func TestLongRunMakesTheNextFireASkip(t *testing.T) {
	f := newFixture(t)
	f.hold = 2500 * time.Millisecond
	sv := f.serve(f.config(everySecond), nil)
	waitUntil(t, 10*time.Second, "a skip", func() bool {
		return len(f.events(store.EventQuery{Name: "tick", Events: []string{"skip"}})) > 0
	})
	skip := f.events(store.EventQuery{Name: "tick", Events: []string{"skip"}})[0]
	runs := f.runs()
	if len(runs) != 1 || !strings.Contains(skip.Detail, "still running") || !strings.Contains(skip.Detail, "schedule tick") {
		t.Fatalf("runs %+v, skip %+v", runs, skip)
	}
	// Through the API's path: busy, with the holder.
	_, err := sv.s.FireNow(context.Background(), "tick")
	var busy *BusyError
	if !errors.As(err, &busy) || busy.RunID != runs[0].ID {
		t.Errorf("FireNow while a run goes: %v", err)
	}
	if _, err := sv.s.FireNow(context.Background(), "nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("FireNow of an unknown schedule: %v", err)
	}
	sv.stop(t)

	// Another process's experiment (here: another lock file handle).
	other, err := hostctl.TryLock(hostctl.LockPath(f.state), hostctl.LockHolder{RunID: 77, Playbook: "other.lua"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	before := len(f.runs())
	f.hold = 10 * time.Millisecond
	sv = f.serve(f.config(everySecond), nil)
	waitUntil(t, 10*time.Second, "a skip naming the lock's holder", func() bool {
		evs := f.events(store.EventQuery{Name: "tick", Events: []string{"skip"}, Limit: 1})
		return len(evs) > 0 && strings.Contains(evs[0].Detail, "run 77 of other.lua")
	})
	sv.stop(t)
	if n := len(f.runs()); n != before {
		t.Errorf("%d runs started while another experiment held the lock", n-before)
	}
	skips, _ := f.st.CountScheduleEvents(context.Background(), store.KindSchedule, "skip")
	if skips["tick"] < 2 {
		t.Errorf("skips = %v", skips)
	}
}

// TestCatchUpFiresOnceAfterDowntime: a daemon down over several fire
// times of a schedule with catch_up runs it once at start, with the
// trigger "catch-up NAME"; a schedule without catch_up does not.
func TestCatchUpFiresOnceAfterDowntime(t *testing.T) {
	f := newFixture(t)
	text := `
schedules:
  - name: tick
    cron: "@every 1s"
    playbook: tick.lua
    catch_up: 1m
  - name: plain
    cron: "@every 1h"
    playbook: plain.lua
`
	sv := f.serve(f.config(text), nil)
	waitUntil(t, 10*time.Second, "a run", func() bool { return len(f.runs()) > 0 })
	sv.stop(t)
	time.Sleep(2500 * time.Millisecond) // down over two fire times
	sv = f.serve(f.config(text), nil)
	waitUntil(t, 5*time.Second, "the catch-up's end", func() bool {
		return len(f.events(store.EventQuery{Name: "tick", Events: []string{"end"}, Since: time.Now().Add(-2 * time.Second)})) > 0
	})
	time.Sleep(300 * time.Millisecond)
	sv.stop(t)
	var catchUps int
	for _, r := range f.runs() {
		if strings.HasPrefix(r.Trigger, "catch-up") {
			catchUps++
			if r.Trigger != "catch-up tick" {
				t.Errorf("catch-up trigger %q", r.Trigger)
			}
		}
		if strings.Contains(r.Trigger, "plain") {
			t.Errorf("plain (no catch_up) ran: %+v", r)
		}
	}
	if catchUps != 1 {
		t.Errorf("%d catch-up runs, want 1", catchUps)
	}
}

// TestBadReloadKeepsTheOldSchedules: SIGHUP with a config that does not
// check is refused, logged with the reason and recorded; the old schedules
// go on firing. A good one then takes over.
func TestBadReloadKeepsTheOldSchedules(t *testing.T) {
	f := newFixture(t)
	next := func() (Config, error) {
		return ParseConfig(f.dir+"/wtd.yaml", []byte("schedules:\n  - name: x\n    cron: \"every day\"\n    playbook: x.lua\n"))
	}
	sv := f.serve(f.config(everySecond), func() (Config, error) { return next() })
	sv.signals <- syscall.SIGHUP
	waitUntil(t, 5*time.Second, "the refused reload", func() bool {
		return len(f.events(store.EventQuery{Kind: store.KindDaemon, Events: []string{"reload-refused"}})) > 0
	})
	refused := f.events(store.EventQuery{Kind: store.KindDaemon, Events: []string{"reload-refused"}})[0]
	if !strings.Contains(refused.Detail, "wtd.yaml:3:") || !strings.Contains(f.log.String(), "reload refused") {
		t.Errorf("refusal %q; log:\n%s", refused.Detail, f.log)
	}
	if scheds, _ := sv.s.Status(1); len(scheds) != 1 || scheds[0].Name != "tick" {
		t.Fatalf("schedules after the bad reload: %+v", scheds)
	}
	since := time.Now()
	waitUntil(t, 5*time.Second, "a fire of the old schedule after the bad reload", func() bool {
		return len(f.events(store.EventQuery{Name: "tick", Events: []string{"fire"}, Since: since})) > 0
	})
	next = func() (Config, error) {
		return f.config("schedules:\n  - name: tock\n    cron: \"@every 1s\"\n    playbook: tock.lua\n"), nil
	}
	sv.signals <- syscall.SIGHUP
	waitUntil(t, 5*time.Second, "a fire of the new schedule", func() bool {
		return len(f.events(store.EventQuery{Name: "tock", Events: []string{"fire"}})) > 0
	})
	sv.stop(t)
	if scheds, _ := sv.s.Status(1); len(scheds) != 1 || scheds[0].Name != "tock" {
		t.Errorf("schedules after the good reload: %+v", scheds)
	}
}

// TestStopMidRunAbortsIt: SIGTERM during a run aborts it (recorded
// aborted with the reason), its server is shut down, the lock is free,
// and Serve returns well within 30 s.
func TestStopMidRunAbortsIt(t *testing.T) {
	f := newFixture(t)
	f.hold, f.server = time.Minute, true
	sv := f.serve(f.config(everySecond), nil)
	var id int64
	waitUntil(t, 60*time.Second, "a run with its server up", func() bool {
		id, _ = sv.s.Current()
		return id > 0 && f.pid(id) > 0
	})
	pid := f.pid(id)
	if took := sv.stop(t); took > 30*time.Second {
		t.Errorf("stopping took %s", took)
	}
	r, err := f.st.GetRun(context.Background(), id)
	if err != nil || r.Status != store.StatusAborted || !strings.Contains(r.Reason, "daemon stopping (terminated)") {
		t.Errorf("run after SIGTERM: %+v, %v", r, err)
	}
	if !processGone(pid) {
		t.Errorf("server %d still running after the daemon stopped", pid)
	}
	l, err := hostctl.TryLock(hostctl.LockPath(f.state), hostctl.LockHolder{})
	if err != nil {
		t.Errorf("the lock is still held: %v", err)
	}
	l.Release()
	if evs := f.events(store.EventQuery{Kind: store.KindDaemon, Events: []string{"stop"}}); len(evs) != 1 {
		t.Errorf("stop events: %+v", evs)
	}
}
