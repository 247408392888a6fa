package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestChangePointsFindsAStep(t *testing.T) {
	x := []float64{10, 10.2, 9.9, 10.1, 10, 9.8, 10.1, 12, 12.1, 11.9, 12.2, 12, 11.8, 12.1}
	cps := ChangePoints(x, 0.01, 0)
	if len(cps) != 1 || cps[0].Index != 7 || !near(cps[0].ChangePct, 20, 1) || cps[0].P >= 0.01 {
		t.Errorf("change points %+v", cps)
	}
	if cps := ChangePoints([]float64{1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, 0.01, 0); len(cps) != 0 {
		t.Errorf("alternating noise gave %+v", cps)
	}
	if cps := ChangePoints([]float64{1, 2, 3}, 0.01, 0); cps != nil {
		t.Errorf("too short: %+v", cps)
	}
}

// changePointScore runs the detector over synthetic series: each series
// has 60 points of noise with a coefficient of variation cv around a level,
// and (when shifted) one lasting shift of 5-20% up or down at a point
// between 10 and 50. A detection within tolerance points of the shift is
// a true positive.
func changePointScore(seed uint64, nseries int, shifted bool, cv, alpha float64, tolerance int) (tp, fp, fn int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for range nseries {
		level := 1000 + 9000*rng.Float64()
		at, size := -1, 0.0
		if shifted {
			at = 10 + rng.IntN(41)
			size = 0.05 + 0.15*rng.Float64()
			if rng.IntN(2) == 0 {
				size = -size
			}
		}
		x := make([]float64, 60)
		for i := range x {
			m := level
			if at >= 0 && i >= at {
				m *= 1 + size
			}
			x[i] = m * (1 + cv*rng.NormFloat64())
		}
		found := false
		for _, cp := range ChangePoints(x, alpha, 0) {
			if at >= 0 && !found && abs(cp.Index-at) <= tolerance && math.Signbit(cp.ChangePct) == math.Signbit(size) {
				tp++
				found = true
			} else {
				fp++
			}
		}
		if at >= 0 && !found {
			fn++
		}
	}
	return
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestChangePointPrecisionRecall: 30 series of 60 points with 5% noise and
// one 5-20% shift each; and 30 series without a shift, where every
// detection is a false alarm.
func TestChangePointPrecisionRecall(t *testing.T) {
	tp, fp, fn := changePointScore(1, 30, true, 0.05, DefaultHistoryAlpha, 3)
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	_, alarms, _ := changePointScore(2, 30, false, 0.05, DefaultHistoryAlpha, 3)
	t.Logf("alpha %.3g: precision %.2f, recall %.2f (tp %d fp %d fn %d); %d false alarms in 30 series without a shift",
		DefaultHistoryAlpha, precision, recall, tp, fp, fn, alarms)
	if precision < 0.85 || recall < 0.85 || alarms > 4 {
		t.Errorf("precision %.2f recall %.2f false alarms %d", precision, recall, alarms)
	}
}

// TestRetestBetweenNeighbours: a level going 1000 -> 900 -> 800 with three
// runs at 900. The first pass splits the whole series where the 800s begin
// (index 11), then the 1000s from the 900s (index 8). Between its
// neighbours (the three 900s against the 800s) the split at 11 rests on
// three runs: with ±10 of noise among them its p is 0.003 and the re-test
// drops it; with ±5 it passes and both stay.
func TestRetestBetweenNeighbours(t *testing.T) {
	before := []float64{1000, 1010, 990, 1005, 995, 1008, 992, 1000}
	after := []float64{800, 802, 798, 801, 799, 800, 802, 798, 800}
	for _, tc := range []struct {
		name   string
		middle []float64
		splits []int
		want   []int
	}{
		{"noisy middle", []float64{890, 910, 900}, []int{8, 11}, []int{8}},
		{"steady middle", []float64{895, 905, 900}, []int{8, 11}, []int{8, 11}},
	} {
		x := append(append(append([]float64{}, before...), tc.middle...), after...)
		if got := splits(x, DefaultHistoryAlpha, DefaultMinSegment); !slices.Equal(got, tc.splits) {
			t.Errorf("%s: first pass %v, want %v", tc.name, got, tc.splits)
		}
		var got []int
		cps := ChangePoints(x, DefaultHistoryAlpha, DefaultMinSegment)
		for _, cp := range cps {
			got = append(got, cp.Index)
			if cp.P >= DefaultHistoryAlpha {
				t.Errorf("%s: change point %+v kept at p >= %g", tc.name, cp, DefaultHistoryAlpha)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: change points %+v, want at %v", tc.name, cps, tc.want)
		}
	}
}
