package schedule

import (
	"context"
	"errors"
	"fmt"
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

// TestCatchUpFiresOnceAfterDowntime: a daemon started after a downtime
// over many fire times of a schedule with catch_up runs it once at start,
// with the trigger "catch-up NAME", then on its spec; a schedule without
// catch_up is not caught up. The previous daemon's start and stop are
// planted ten minutes back; TestCatchUpHonoursItsWindow has the cases.
func TestCatchUpFiresOnceAfterDowntime(t *testing.T) {
	f := newFixture(t)
	text := `
schedules:
  - name: tick
    cron: "@every 1s"
    playbook: tick.lua
    catch_up: 1m
  - name: plain
    cron: "* * * * *"
    playbook: plain.lua
`
	down := time.Now().Add(-10 * time.Minute)
	f.plant(store.ScheduleEvent{TS: down.Add(-time.Hour), Kind: store.KindDaemon, Event: "start"})
	f.plant(store.ScheduleEvent{TS: down, Kind: store.KindDaemon, Event: "stop"})
	sv := f.serve(f.config(text), nil)
	waitUntil(t, 10*time.Second, "the catch-up's end and a scheduled fire", func() bool {
		ends := f.events(store.EventQuery{Name: "tick", Events: []string{"end"}})
		fires := f.events(store.EventQuery{Name: "tick", Events: []string{"fire"}, Limit: 1})
		return len(ends) > 0 && len(fires) > 0 && fires[0].Attrs["trigger"] == "schedule tick"
	})
	sv.stop(t)
	var catchUps []store.ScheduleEvent
	for _, ev := range f.events(store.EventQuery{Kind: store.KindSchedule, Events: []string{"fire", "skip", "error"}}) {
		if trigger, _ := ev.Attrs["trigger"].(string); strings.HasPrefix(trigger, "catch-up") || strings.Contains(trigger, "plain") {
			catchUps = append(catchUps, ev)
		}
	}
	if len(catchUps) != 1 || catchUps[0].Event != "fire" || catchUps[0].Attrs["trigger"] != "catch-up tick" {
		t.Errorf("catch-up events %s, want one fire of tick", describe(catchUps))
	}
	var runs int
	for _, r := range f.runs() {
		if r.Trigger == "catch-up tick" {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("%d catch-up runs, want 1", runs)
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

// TestCatchUpHonoursItsWindow: at start, a schedule with catch_up whose
// fire time passed while the daemon was down fires once, however many
// fire times it missed, when its last missed fire is less than catch_up
// ago; not when every missed fire is older (a downtime longer than
// catch_up), when the previous daemon or the schedule's own history shows
// it was up at the fire, when no daemon ran before, or without catch_up.
// The earlier daemon's history is planted; the clock is the test's.
func TestCatchUpHonoursItsWindow(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2030, 1, 15, h, m, s, 0, time.UTC) }
	daemon := func(event string, ts time.Time) store.ScheduleEvent {
		return store.ScheduleEvent{TS: ts, Kind: store.KindDaemon, Event: event}
	}
	tick := func(event string, ts time.Time) store.ScheduleEvent {
		return store.ScheduleEvent{TS: ts, Kind: store.KindSchedule, Name: "tick", Event: event}
	}
	const every10, hourly = "CRON_TZ=UTC */10 * * * *", "CRON_TZ=UTC 0 * * * *"
	for _, tc := range []struct {
		name    string
		cron    string
		catchUp string // "": none
		history []store.ScheduleEvent
		now     time.Time
		want    bool // one catch-up fire, of 12:00
	}{
		{"down 50m within catch_up 1h: five missed fires, one catch-up", every10, "1h",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), daemon("stop", at(11, 15, 0))}, at(12, 5, 0), true},
		{"down 6h, longer than catch_up 30m: the last missed fire is within it", every10, "30m",
			[]store.ScheduleEvent{daemon("start", at(5, 0, 0)), daemon("stop", at(6, 5, 0))}, at(12, 5, 0), true},
		{"down 6h, longer than catch_up 5m: every missed fire is older", hourly, "5m",
			[]store.ScheduleEvent{daemon("start", at(5, 0, 0)), daemon("stop", at(6, 30, 0))}, at(12, 10, 0), false},
		{"the last missed fire exactly catch_up ago", hourly, "5m",
			[]store.ScheduleEvent{daemon("start", at(5, 0, 0)), daemon("stop", at(6, 30, 0))}, at(12, 5, 0), false},
		{"the last missed fire a second less than catch_up ago", hourly, "5m",
			[]store.ScheduleEvent{daemon("start", at(5, 0, 0)), daemon("stop", at(6, 30, 0))}, at(12, 4, 59), true},
		{"no fire time while down", every10, "1h",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), daemon("stop", at(12, 1, 0))}, at(12, 9, 0), false},
		{"a reload after the fire time: the daemon was up", every10, "1h",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), daemon("reload", at(12, 1, 0))}, at(12, 9, 0), false},
		{"a crash after the fire: the schedule's history shows it", every10, "1h",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), tick("fire", at(12, 0, 0)), tick("end", at(12, 0, 5))}, at(12, 8, 0), false},
		{"a crash before the fire", every10, "1h",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), tick("fire", at(11, 50, 0)), tick("end", at(11, 50, 5))}, at(12, 8, 0), true},
		{"no daemon ran before", every10, "1h", nil, at(12, 5, 0), false},
		{"no catch_up", every10, "",
			[]store.ScheduleEvent{daemon("start", at(9, 0, 0)), daemon("stop", at(11, 15, 0))}, at(12, 5, 0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.hold = time.Minute // a second fire at start would be a skip
			for _, ev := range tc.history {
				f.plant(ev)
			}
			text := fmt.Sprintf("schedules:\n  - name: tick\n    cron: %q\n    playbook: tick.lua\n", tc.cron)
			if tc.catchUp != "" {
				text += "    catch_up: " + tc.catchUp + "\n"
			}
			f.startAt(f.config(text), &clock{t: tc.now})
			evs := f.events(store.EventQuery{Kind: store.KindSchedule, Since: tc.now})
			runs := f.runs()
			if !tc.want {
				if len(evs) != 0 || len(runs) != 0 {
					t.Fatalf("no catch-up wanted; events at start %s, %d runs", describe(evs), len(runs))
				}
				return
			}
			if len(evs) != 1 || evs[0].Event != "fire" || evs[0].Attrs["trigger"] != "catch-up tick" || !evs[0].TS.Equal(tc.now) {
				t.Errorf("events at start %s, want one catch-up fire at %s", describe(evs), tc.now.Format(time.TimeOnly))
			}
			if len(runs) != 1 || runs[0].Trigger != "catch-up tick" {
				t.Errorf("%d runs, want one with trigger catch-up tick", len(runs))
			}
			if want := "msg=catch-up schedule=tick missed=2030-01-15T12:00:00Z"; !strings.Contains(f.log.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, f.log)
			}
		})
	}
}

// describe words schedule events as "EVENT (TRIGGER) at TIME".
func describe(evs []store.ScheduleEvent) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%s (%v) at %s", ev.Event, ev.Attrs["trigger"], ev.TS.UTC().Format(time.TimeOnly)))
	}
	return out
}

// The next fires a running scheduler shows are the ones it will fire: an
// @every 30s schedule started at 12:00:00 fires at 12:00:30 and 12:01:00,
// and at 12:00:10 shows those, not 12:00:40; after the fire at 12:00:30
// (the tick coming a little late) it shows 12:01:00... as the loop keeps
// them. A cron schedule shows its cron times.
func TestStatusShowsTheFiresTheLoopWillMake(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2030, 1, 15, h, m, s, 0, time.UTC) }
	f := newFixture(t)
	c := &clock{t: at(12, 0, 0)}
	s := f.startAt(f.config("schedules:\n  - name: every\n    cron: \"@every 30s\"\n    playbook: tick.lua\n"+
		"  - name: cron\n    cron: \"CRON_TZ=UTC */10 * * * *\"\n    playbook: tick.lua\n"), c)
	check := func(when string, want map[string][]time.Time) {
		t.Helper()
		scheds, _ := s.Status(2)
		for _, st := range scheds {
			if fmt.Sprint(st.Next) != fmt.Sprint(want[st.Name]) {
				t.Errorf("%s: %s next %v, want %v", when, st.Name, st.Next, want[st.Name])
			}
		}
	}
	c.set(at(12, 0, 10))
	check("at 12:00:10", map[string][]time.Time{"every": {at(12, 0, 30), at(12, 1, 0)}, "cron": {at(12, 10, 0), at(12, 20, 0)}})
	c.set(at(12, 0, 30))
	s.tick(context.Background(), at(12, 0, 30))
	c.set(at(12, 0, 45))
	check("at 12:00:45, after the fire", map[string][]time.Time{"every": {at(12, 1, 0), at(12, 1, 30)}, "cron": {at(12, 10, 0), at(12, 20, 0)}})
}

// An @every schedule fires at its start plus whole periods however late a
// tick comes: started at 12:00:00, a 30 s schedule whose 12:00:30 fire is
// ticked at 12:00:33 (the loop was busy) fires next at 12:01:00, not
// 12:01:03, and says so; a tick more than a period late skips the fires
// it missed and keeps to the grid (12:02:00 after a tick at 12:01:40).
func TestEveryKeepsToItsGridWhenATickIsLate(t *testing.T) {
	at := func(h, m, s int) time.Time { return time.Date(2030, 1, 15, h, m, s, 0, time.UTC) }
	f := newFixture(t)
	c := &clock{t: at(12, 0, 0)}
	s := f.startAt(f.config("schedules:\n  - name: every\n    cron: \"@every 30s\"\n    playbook: tick.lua\n"), c)
	next := func() []time.Time {
		scheds, _ := s.Status(2)
		return scheds[0].Next
	}
	for _, step := range []struct {
		tick time.Time
		want []time.Time
	}{
		{at(12, 0, 33), []time.Time{at(12, 1, 0), at(12, 1, 30)}},
		{at(12, 1, 0), []time.Time{at(12, 1, 30), at(12, 2, 0)}},
		{at(12, 1, 40), []time.Time{at(12, 2, 0), at(12, 2, 30)}},
	} {
		c.set(step.tick)
		s.tick(context.Background(), step.tick)
		if got := next(); fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Errorf("after a tick at %s: next %v, want %v", step.tick.Format("15:04:05"), got, step.want)
		}
	}
}
