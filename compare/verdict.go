package compare

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Verdicts.
const (
	Faster        = "faster"
	Slower        = "slower"
	Higher        = "higher"
	Lower         = "lower"
	NoDifference  = "no difference"
	NotComparable = "not comparable"
	// NotReliable is the kind of a verdict line saying that the host was
	// busy with other work during a compared step.
	NotReliable = "not reliable"
)

// Tests a comparison can use on repeated values.
const (
	TestMannWhitney = "mwu"       // Mann-Whitney U, two-sided
	TestBootstrap   = "bootstrap" // percentile bootstrap interval of the median's change
)

// Better says which way a measure improves.
type Better int

const (
	HigherIsFaster Better = iota // throughput
	LowerIsFaster                // latency, pages read per operation, eviction time
	Neutral                      // peaks: higher or lower, not faster or slower
)

// Judgement is the verdict on one measure from repeated values of two runs.
type Judgement struct {
	NA      int         `json:"n_a"` // values tested on each side
	NB      int         `json:"n_b"`
	P       *float64    `json:"p"`               // the test's p-value (Mann-Whitney)
	CI      *[2]float64 `json:"change_interval"` // bootstrap interval of the relative change of the median
	Verdict string      `json:"verdict"`
	Test    string      `json:"test"` // what decided: "mwu", "bootstrap", or why there was no test
}

// bootstrapIters is the number of resamples of the bootstrap test.
const bootstrapIters = 2000

// minValues is the fewest values on each side a test is tried with.
const minValues = 3

// Judge decides from repeated values of a measure (per-second values or
// per-round ones) whether b differs from a at level alpha. It says
// NoDifference whenever the test cannot tell, including when either side
// has fewer than three values. NaNs are dropped.
func Judge(a, b []float64, better Better, alpha float64, test string) Judgement {
	a, b = finite(a), finite(b)
	j := Judgement{NA: len(a), NB: len(b), Verdict: NoDifference}
	if len(a) < minValues || len(b) < minValues {
		j.Test = fmt.Sprintf("none: %d and %d values (a test needs %d each)", len(a), len(b), minValues)
		return j
	}
	shift := Median(b) - Median(a)
	significant := false
	switch test {
	case TestBootstrap:
		lo, hi := BootstrapMedianChange(a, b, alpha, bootstrapIters, 1)
		if !math.IsNaN(lo) {
			j.CI = &[2]float64{lo, hi}
			significant = lo > 0 || hi < 0
			shift = (lo + hi) / 2
		}
		j.Test = TestBootstrap
	default:
		_, p := MannWhitney(a, b)
		j.P = &p
		significant = p < alpha
		if shift == 0 {
			shift = stat.Mean(b, nil) - stat.Mean(a, nil)
		}
		j.Test = TestMannWhitney
	}
	if significant && shift != 0 {
		j.Verdict = direction(shift > 0, better)
	}
	return j
}

// direction words a significant change: up is true when b is higher.
func direction(up bool, better Better) string {
	switch better {
	case HigherIsFaster:
		if up {
			return Faster
		}
		return Slower
	case LowerIsFaster:
		if up {
			return Slower
		}
		return Faster
	}
	if up {
		return Higher
	}
	return Lower
}

func finite(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}
