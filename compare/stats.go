// Package compare judges whether runs differ beyond noise: the statistical
// tests (Mann-Whitney U, Welch's t, a bootstrap of the median), change-point
// detection over a history of runs (E-divisive means with a t-test), and
// the comparison of two recorded runs step by step.
package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// exactLimit is the largest n1+n2 for which MannWhitney counts the exact
// distribution of U (when there are no ties).
const exactLimit = 40

// MannWhitney tests whether x and y come from the same distribution against
// one being shifted (two-sided). It returns U for x (the number of pairs
// with x > y, ties counting one half) and the p-value: exact for small
// samples without ties, else from the normal approximation with the tie
// and continuity corrections. Either sample empty gives p = 1.
func MannWhitney(x, y []float64) (u, p float64) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return 0, 1
	}
	type obs struct {
		v   float64
		isX bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var rankSumX, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			if all[k].isX {
				rankSumX += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u = rankSumX - float64(n1)*float64(n1+1)/2
	switch {
	case !ties && n1+n2 <= exactLimit:
		return u, exactMannWhitney(n1, n2, u)
	case ties && binomial(n1+n2, n1) <= maxPermutations:
		ranks := make([]float64, len(all))
		for i := 0; i < len(all); {
			j := i
			for j < len(all) && all[j].v == all[i].v {
				j++
			}
			for k := i; k < j; k++ {
				ranks[k] = float64(i+j+1) / 2
			}
			i = j
		}
		return u, permutationMannWhitney(ranks, n1, u)
	}
	return u, normalMannWhitney(n1, n2, u, tieTerm)
}

// normalMannWhitney is the two-sided p-value of U = u from the normal
// approximation, with tieTerm = sum of t^3-t over groups of t tied values.
func normalMannWhitney(n1, n2 int, u, tieTerm float64) float64 {
	n := float64(n1 + n2)
	mu := float64(n1) * float64(n2) / 2
	sigma2 := float64(n1) * float64(n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if sigma2 <= 0 {
		return 1 // every value equal
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(sigma2)
	if z < 0 {
		z = 0
	}
	return math.Min(1, 2*distuv.UnitNormal.Survival(z))
}

// maxPermutations bounds the splits permutationMannWhitney enumerates.
const maxPermutations = 200000

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// permutationMannWhitney is the two-sided p-value of U = u for small
// samples with ties: every way of taking n1 of the (mid)ranks as the x
// sample is counted, so tied values are handled exactly.
func permutationMannWhitney(ranks []float64, n1 int, u float64) float64 {
	n := len(ranks)
	mu := float64(n1) * float64(n-n1) / 2
	d := math.Abs(u - mu)
	offset := float64(n1) * float64(n1+1) / 2
	var total, tail float64
	var walk func(start, left int, sum float64)
	walk = func(start, left int, sum float64) {
		if left == 0 {
			total++
			if math.Abs(sum-offset-mu) >= d-1e-9 {
				tail++
			}
			return
		}
		for i := start; i <= n-left; i++ {
			walk(i+1, left-1, sum+ranks[i])
		}
	}
	walk(0, n1, 0)
	return math.Min(1, tail/total)
}

// exactMannWhitney is the two-sided p-value of U = u for samples of n1 and
// n2 without ties: twice the probability of a U at least as far from its
// mean, counted over all arrangements.
func exactMannWhitney(n1, n2 int, u float64) float64 {
	// counts[a][b][k]: arrangements of a x's and b y's with U = k, built
	// one sample at a time (the last element is an x, adding b to U, or a y).
	maxU := n1 * n2
	prev := make([][]float64, n2+1) // a-1 row
	cur := make([][]float64, n2+1)
	for b := 0; b <= n2; b++ {
		prev[b] = make([]float64, maxU+1)
		prev[b][0] = 1 // a = 0: one arrangement, U = 0
	}
	for a := 1; a <= n1; a++ {
		for b := 0; b <= n2; b++ {
			cur[b] = make([]float64, maxU+1)
			for k := 0; k <= a*b; k++ {
				v := 0.0
				if k-b >= 0 {
					v += prev[b][k-b]
				}
				if b > 0 {
					v += cur[b-1][k]
				}
				cur[b][k] = v
			}
		}
		prev, cur = cur, prev
	}
	dist := prev[n2]
	total := 0.0
	for _, c := range dist {
		total += c
	}
	mu := float64(maxU) / 2
	d := math.Abs(u - mu)
	tail := 0.0
	for k, c := range dist {
		if math.Abs(float64(k)-mu) >= d-1e-9 {
			tail += c
		}
	}
	return math.Min(1, tail/total)
}

// WelchT is Welch's two-sample t-test (unequal variances), two-sided: the
// t statistic (mean of y minus mean of x over its standard error) and the
// p-value. Fewer than two values on a side, or no variance at all, gives
// p = 1 unless the means differ with zero variance (p = 0).
func WelchT(x, y []float64) (t, p float64) {
	if len(x) < 2 || len(y) < 2 {
		return 0, 1
	}
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	sx, sy := vx/float64(len(x)), vy/float64(len(y))
	se := math.Sqrt(sx + sy)
	if se <= 1e-12*math.Max(math.Abs(mx), math.Abs(my)) {
		if math.Abs(my-mx) <= 1e-9*math.Max(math.Abs(mx), math.Abs(my)) {
			return 0, 1
		}
		return math.Copysign(math.Inf(1), my-mx), 0
	}
	t = (my - mx) / se
	df := (sx + sy) * (sx + sy) / (sx*sx/float64(len(x)-1) + sy*sy/float64(len(y)-1))
	return t, math.Min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t)))
}

// Median returns the median of x (NaN when empty).
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return medianInPlace(slices.Clone(x))
}

// BootstrapMedianChange is a percentile bootstrap interval, at confidence
// 1-alpha, of the relative change of the median from x to y
// (median(y)/median(x) - 1), from iters resamples drawn with a fixed seed
// (the same data always give the same interval).
func BootstrapMedianChange(x, y []float64, alpha float64, iters int, seed uint64) (lo, hi float64) {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	bx, by := make([]float64, len(x)), make([]float64, len(y))
	changes := make([]float64, 0, iters)
	for range iters {
		for i := range bx {
			bx[i] = x[rng.IntN(len(x))]
		}
		for i := range by {
			by[i] = y[rng.IntN(len(y))]
		}
		mx := medianInPlace(bx)
		if mx == 0 {
			continue
		}
		changes = append(changes, medianInPlace(by)/mx-1)
	}
	if len(changes) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(changes)
	return stat.Quantile(alpha/2, stat.Empirical, changes, nil), stat.Quantile(1-alpha/2, stat.Empirical, changes, nil)
}

// medianInPlace sorts x and returns its median.
func medianInPlace(x []float64) float64 {
	slices.Sort(x)
	m := len(x) / 2
	if len(x)%2 == 1 {
		return x[m]
	}
	return (x[m-1] + x[m]) / 2
}
