package schedule

import (
	"time"

	"github.com/robfig/cron/v3"
)

// maxSteps bounds every walk over a schedule's fire times.
const maxSteps = 100000

// NextTimes returns the n fire times of s after t.
func NextTimes(s cron.Schedule, t time.Time, n int) []time.Time {
	var out []time.Time
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// nextAfter returns the first fire time of s after now on the grid of
// due, the fire time that came: an @every schedule keeps to its start plus
// whole periods however late the loop came to fire it (from now, a tick a
// second late would push every later fire by a second). The fires a tick
// more than a period late missed are skipped.
func nextAfter(s cron.Schedule, due, now time.Time) time.Time {
	t := due
	for range maxSteps {
		t = s.Next(t)
		if t.IsZero() || t.After(now) {
			return t
		}
	}
	return s.Next(now)
}

// lastFire returns the latest fire time of s in (after, upTo], if any.
func lastFire(s cron.Schedule, after, upTo time.Time) (time.Time, bool) {
	var last time.Time
	t := after
	for range maxSteps {
		t = s.Next(t)
		if t.IsZero() || t.After(upTo) {
			break
		}
		last = t
	}
	return last, !last.IsZero()
}

// shortestGap returns the shortest time between the next n+1 fire times
// of s from now (0 when there are fewer).
func shortestGap(s cron.Schedule, n int) time.Duration {
	times := NextTimes(s, time.Now(), n+1)
	var gap time.Duration
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); gap == 0 || d < gap {
			gap = d
		}
	}
	return gap
}
