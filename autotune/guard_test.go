package autotune

import (
	"errors"
	"strings"
	"testing"
	"time"

	"wtd/engine/workload"
)

// TestGuard: a second of a trial is stopped when its p99 passes the
// factor times the baseline's worst second (or its whole p99, when that
// is higher), never in the warm-up; the rate guard looks at the last 2 s
// after the warm-up.
func TestGuard(t *testing.T) {
	sec := func(n int, p99ms float64, warm bool) workload.Status {
		return workload.Status{LastSecond: n, LastSecondP99Micros: p99ms * 1000, LastSecondWarmup: warm}
	}
	for _, c := range []struct {
		name             string
		base, baseSecond float64 // ms
		guard            Guard
		spec             workload.Spec
		statuses         []workload.Status
		want             string // "" : not stopped
	}{
		{"a noisy second within the worst second's bound", 0.8, 5, Guard{P99Factor: 10}, workload.Spec{},
			[]workload.Status{sec(0, 30, false), sec(1, 49, false)}, ""},
		{"a second past it", 0.8, 5, Guard{P99Factor: 10}, workload.Spec{},
			[]workload.Status{sec(0, 30, false), sec(1, 51, false)}, "p99 51.0 ms in second 1, over 10 x the baseline's worst second's p99 5.000 ms"},
		{"the whole p99 when higher", 6, 5, Guard{P99Factor: 10}, workload.Spec{},
			[]workload.Status{sec(0, 55, false), sec(1, 61, false)}, "p99 61.0 ms in second 1, over 10 x the baseline's p99 6.000 ms"},
		{"not in the warm-up", 0.8, 5, Guard{P99Factor: 10}, workload.Spec{},
			[]workload.Status{sec(0, 900, true), sec(-1, 900, false)}, ""},
		{"off", 0.8, 5, Guard{}, workload.Spec{}, []workload.Status{sec(0, 900, false)}, ""},
		{"no baseline measured", 0, 0, Guard{P99Factor: 10}, workload.Spec{}, []workload.Status{sec(0, 900, false)}, ""},
		{"behind its rate", 0, 0, Guard{Behind: 0.1}, workload.Spec{Rate: 100, Warmup: time.Second}, []workload.Status{
			{Elapsed: 500 * time.Millisecond, Ops: 0, LastSecond: -1}, // in the warm-up: not counted
			{Elapsed: 1000 * time.Millisecond, Ops: 100, LastSecond: -1},
			{Elapsed: 2000 * time.Millisecond, Ops: 150, LastSecond: -1},
			{Elapsed: 3000 * time.Millisecond, Ops: 200, LastSecond: -1}},
			"the load fell behind its rate: 50 of 100 ops/s over the last 2.0 s"},
		{"keeping its rate", 0, 0, Guard{Behind: 0.1}, workload.Spec{Rate: 100}, []workload.Status{
			{Elapsed: 1000 * time.Millisecond, Ops: 100, LastSecond: -1},
			{Elapsed: 2000 * time.Millisecond, Ops: 195, LastSecond: -1},
			{Elapsed: 3000 * time.Millisecond, Ops: 292, LastSecond: -1}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &search{cfg: Config{Guard: c.guard}, baseP99: c.base, baseSecondP99: c.baseSecond}
			g := s.guard(c.spec)
			var err error
			for _, st := range c.statuses {
				if err = g(st); err != nil {
					break
				}
			}
			var ge *GuardError
			switch {
			case c.want == "" && err != nil:
				t.Errorf("stopped: %v", err)
			case c.want != "" && (!errors.As(err, &ge) || !strings.Contains(ge.Reason, c.want)):
				t.Errorf("guard %v, want %q", err, c.want)
			}
		})
	}
}
