// Package testbench has what the project's benchmarks share: alternating
// pairs of runs, their ratios reported with their spread against a budget,
// and the process's CPU time. Benchmarks import it from _test files only.
package testbench

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// Pairs runs a and b n times each, alternating which goes first,
// and returns the ratio b/a of each pair (a and b return ops/s).
func Pairs(n int, a, b func() float64) []float64 {
	ratios := make([]float64, 0, n)
	for i := range n {
		var x, y float64
		if i%2 == 0 {
			x = a()
			y = b()
		} else {
			y = b()
			x = a()
		}
		ratios = append(ratios, y/x)
	}
	return ratios
}

// ReportRatios reports the median and spread (min, max, interquartile
// range) of per-pair ratios and says whether the median meets budget.
func ReportRatios(b *testing.B, name string, ratios []float64, budget float64) {
	s := slices.Clone(ratios)
	slices.Sort(s)
	q := func(f float64) float64 { return s[int(f*float64(len(s)-1)+0.5)] }
	b.ReportMetric(q(0.5), name)
	b.ReportMetric(s[0], name+"_min")
	b.ReportMetric(s[len(s)-1], name+"_max")
	b.ReportMetric(q(0.75)-q(0.25), name+"_iqr")
	verdict := "holds"
	if q(0.5) < budget {
		verdict = "does NOT hold"
	}
	b.Logf("%s: median %.3f over %d alternating pairs (min %.3f, quartiles %.3f..%.3f, max %.3f): the budget of %.2f %s",
		name, q(0.5), len(s), s[0], q(0.25), q(0.75), s[len(s)-1], budget, verdict)
}

// CPU returns the CPU time (user and system) this process has used;
// the client's CPU per operation is steadier than throughput on a busy
// machine.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
