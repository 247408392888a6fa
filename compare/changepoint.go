package compare

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// ChangePoint is a lasting shift in a series.
type ChangePoint struct {
	// Index is the first point after the change.
	Index int `json:"index"`
	// Before and After are the means of the segments on either side,
	// bounded by the neighbouring change points.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// ChangePct is After relative to Before, in percent.
	ChangePct float64 `json:"change_pct"`
	// P is the p-value of Welch's t-test between the two segments.
	P float64 `json:"p"`
}

// DefaultMinSegment is the fewest points on each side of a change point.
const DefaultMinSegment = 3

// ChangePoints finds the change points of x, in order, by E-divisive means
// with a t-test for significance (as MongoDB's performance CI and Hunter
// do): the energy statistic (alpha = 1) picks the best split of a segment;
// the split is kept when Welch's t-test between its two sides gives
// p < alpha, and both sides are searched again. At the end each change
// point is tested again between its neighbours, dropping the weakest until
// all pass. The result is deterministic. minSeg < 2 means
// DefaultMinSegment.
func ChangePoints(x []float64, alpha float64, minSeg int) []ChangePoint {
	if minSeg < 2 {
		minSeg = DefaultMinSegment
	}
	if len(x) < 2*minSeg {
		return nil
	}
	return retest(x, splits(x, alpha, minSeg), alpha)
}

// splits is the first pass of ChangePoints: the cuts of x, in order, found
// by splitting each segment at its best split while Welch's t-test between
// the segment's two sides gives p < alpha.
func splits(x []float64, alpha float64, minSeg int) []int {
	var cuts []int
	var split func(s, e int)
	split = func(s, e int) {
		tau, ok := bestSplit(x, s, e, minSeg)
		if !ok {
			return
		}
		if _, p := WelchT(x[s:tau], x[tau:e]); p >= alpha {
			return
		}
		cuts = append(cuts, tau)
		split(s, tau)
		split(tau, e)
	}
	split(0, len(x))
	slices.Sort(cuts)
	return cuts
}

// retest tests each cut again between its neighbouring cuts and drops the
// one with the highest p >= alpha, until every cut passes.
func retest(x []float64, cuts []int, alpha float64) []ChangePoint {
	for {
		cps := describe(x, cuts)
		worst := -1
		for i, cp := range cps {
			if cp.P >= alpha && (worst < 0 || cp.P > cps[worst].P) {
				worst = i
			}
		}
		if worst < 0 {
			return cps
		}
		cuts = slices.Delete(cuts, worst, worst+1)
	}
}

// describe measures each cut against its neighbouring cuts.
func describe(x []float64, cuts []int) []ChangePoint {
	out := make([]ChangePoint, len(cuts))
	for i, c := range cuts {
		s, e := 0, len(x)
		if i > 0 {
			s = cuts[i-1]
		}
		if i+1 < len(cuts) {
			e = cuts[i+1]
		}
		_, p := WelchT(x[s:c], x[c:e])
		before, after := stat.Mean(x[s:c], nil), stat.Mean(x[c:e], nil)
		pct := math.NaN()
		if before != 0 {
			pct = 100 * (after/before - 1)
		}
		out[i] = ChangePoint{Index: c, Before: before, After: after, ChangePct: pct, P: p}
	}
	return out
}

// bestSplit returns the split tau of x[s:e] (s+minSeg <= tau <= e-minSeg)
// that maximises the energy statistic
//
//	Q = nm/(n+m) * (2/(nm) sum|a-b| - sum_{i<k}|ai-ak|/C(n,2) - sum_{j<k}|bj-bk|/C(m,2))
//
// computed from running sums in O(L^2) for a segment of length L.
func bestSplit(x []float64, s, e, minSeg int) (int, bool) {
	L := e - s
	if L < 2*minSeg {
		return 0, false
	}
	seg := x[s:e]
	// left[t]: sum of |xi-xj| over i<j<t; right[t]: over t<=i<j.
	left := make([]float64, L+1)
	for t := 1; t <= L; t++ {
		add := 0.0
		for i := 0; i < t-1; i++ {
			add += math.Abs(seg[i] - seg[t-1])
		}
		left[t] = left[t-1] + add
	}
	right := make([]float64, L+1)
	for t := L - 1; t >= 0; t-- {
		add := 0.0
		for j := t + 1; j < L; j++ {
			add += math.Abs(seg[t] - seg[j])
		}
		right[t] = right[t+1] + add
	}
	total := left[L]
	best, bestQ := 0, math.Inf(-1)
	for t := minSeg; t <= L-minSeg; t++ {
		nA, nB := float64(t), float64(L-t)
		cross := total - left[t] - right[t]
		q := nA * nB / (nA + nB) * (2*cross/(nA*nB) - left[t]/(nA*(nA-1)/2) - right[t]/(nB*(nB-1)/2))
		if q > bestQ {
			best, bestQ = t, q
		}
	}
	return s + best, true
}

// DefaultHistoryAlpha is the significance level of change points over a
// history: each series is tested many times (once per candidate split), so
// a stricter level than a single comparison's keeps false alarms rare.
const DefaultHistoryAlpha = 0.001
