package server

import (
	"testing"
	"time"
)

// With fixed concurrency the ticket pools are the configured limits; with
// throughput probing they start inside [5, limit] and a lower limit
// shrinks them at once; back to fixed, they are the limits again. adjust
// changes nothing while fixed.
func TestExecControlAlgorithms(t *testing.T) {
	pools := func(x *execControl) [2]int { return [2]int{x.read.outof(), x.write.outof()} }
	steps := []struct {
		name string
		do   func(x *execControl)
		want func(t *testing.T, x *execControl)
	}{
		{"defaults", func(*execControl) {}, func(t *testing.T, x *execControl) {
			if got := pools(x); got != [2]int{128, 128} {
				t.Errorf("pools %v, want 128/128", got)
			}
			if alg, iv := x.settings(); alg != algoFixed || iv != 100*time.Millisecond {
				t.Errorf("settings %s %v", alg, iv)
			}
		}},
		{"fixed limits size the pools", func(x *execControl) { x.setLimit(readTicket, 20); x.setLimit(writeTicket, 9) }, func(t *testing.T, x *execControl) {
			if got := pools(x); got != [2]int{20, 9} {
				t.Errorf("pools %v, want 20/9", got)
			}
			if r, w := x.limits(); r != 20 || w != 9 {
				t.Errorf("limits %d/%d", r, w)
			}
		}},
		{"adjust does nothing while fixed", func(x *execControl) { x.adjust(); x.adjust() }, func(t *testing.T, x *execControl) {
			if got := pools(x); got != [2]int{20, 9} {
				t.Errorf("pools %v after adjust, want 20/9", got)
			}
			if st := x.probeStats(); st != (probeStats{}) {
				t.Errorf("probe stats %+v while fixed", st)
			}
		}},
		{"probing starts within the bounds", func(x *execControl) { x.setAlgorithm(algoProbing) }, func(t *testing.T, x *execControl) {
			r, w := x.read.outof(), x.write.outof()
			if r < probeMinConcurrency || r > 20 || w < probeMinConcurrency || w > 9 {
				t.Errorf("pools %d/%d, want within [5, 20] and [5, 9]", r, w)
			}
			if alg, _ := x.settings(); alg != algoProbing || x.probe == nil {
				t.Errorf("algorithm %s, probe %v", alg, x.probe)
			}
		}},
		{"a limit under the pool shrinks it while probing", func(x *execControl) { x.setLimit(writeTicket, 6) }, func(t *testing.T, x *execControl) {
			if w := x.write.outof(); w > 6 {
				t.Errorf("write pool %d over its limit 6", w)
			}
		}},
		{"back to fixed restores the limits", func(x *execControl) { x.setAlgorithm(algoFixed) }, func(t *testing.T, x *execControl) {
			if got := pools(x); got != [2]int{20, 6} {
				t.Errorf("pools %v, want 20/6", got)
			}
			if x.probe != nil {
				t.Error("probe kept after going back to fixed")
			}
		}},
	}
	x := newExecControl()
	for _, s := range steps {
		s.do(x)
		t.Run(s.name, func(t *testing.T) { s.want(t, x) })
	}
}
