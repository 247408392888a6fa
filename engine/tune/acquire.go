package tune

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat/distuv"
)

// minMargin is the least a point must promise to improve on the incumbent,
// in standardised units, before expected improvement credits it.
const minMargin = 0.01

// improvementMargin is how much a point must promise to improve on the
// incumbent before expected improvement credits it: the model's noise
// standard deviation (sn2 is its variance, standardised), as an
// improvement smaller than one measurement's noise cannot be told from
// the noise, and at least minMargin. Without it, on Hartmann-6 with 5%
// noise, the search spent its trials refining a basin by less than the
// noise (around the second-best minimum, -3.20 against -3.32) instead of
// looking for a deeper one; on Branin, whose noise near the
// optimum is small, the margin stays small.
func improvementMargin(sn2 float64) float64 { return math.Max(minMargin, math.Sqrt(sn2)) }

// expectedImprovement is E[max(target - f(u), 0)] under the process's
// posterior at u (minimisation), target being the incumbent less the
// margin.
func expectedImprovement(mean, sd, target float64) float64 {
	imp := target - mean
	z := imp / sd
	return imp*distuv.UnitNormal.CDF(z) + sd*distuv.UnitNormal.Prob(z)
}

// moveSteps are the sizes of the moves around the incumbents, as shares of
// each coordinate's length scale; movesPerStep is how many of each.
var moveSteps = []float64{0.2, 0.07, 0.02}

const movesPerStep = 30

// candidate is a point of the cube with its expected improvement.
type candidate struct {
	u  []float64
	ei float64
}

// acquisition maximises expected improvement over the feasible part of the
// cube: random feasible candidates and moves around the incumbents, then
// Nelder-Mead from the best few on the clamped box, where a point whose
// decoded settings break a constraint scores nothing. It
// returns the candidates best first; every one decodes to settings that
// keep the constraints.
type acquisition struct {
	space  *Space
	model  *gp
	feas   *classifier // nil when no trial was infeasible
	target float64     // the incumbent less the margin
	random int         // random candidates
	local  int         // local optimisations
	rng    *rand.Rand
	buf    []float64
}

func (a *acquisition) ei(u []float64) float64 {
	m, s := a.model.predict(u, a.buf)
	ei := expectedImprovement(m, s, a.target)
	if a.feas != nil {
		// The objective's model knows nothing where trials broke, and far
		// from its data its doubt makes expected improvement large: a
		// point more likely infeasible than not is not a candidate.
		p := a.feas.feasible(u, a.buf)
		if p < 0.5 {
			return 0
		}
		ei *= p
	}
	return ei
}

// classifier is a Gaussian process fitted to labels 1 (infeasible) and 0
// (measured) of every trial: its posterior gives the probability that
// settings can be measured.
type classifier struct {
	model     *gp
	mean, std float64 // of the labels, which the model sees standardised
}

// feasible is the probability that the label at u is below one half.
func (c *classifier) feasible(u, buf []float64) float64 {
	m, s := c.model.predict(u, buf)
	sd := math.Sqrt(s*s+c.model.sn2) * c.std
	return distuv.UnitNormal.CDF((0.5 - (m*c.std + c.mean)) / sd)
}

// around are the points the moves start from: the incumbents.
func (a *acquisition) maximise(around [][]float64) []candidate {
	d := a.space.Dim()
	a.buf = make([]float64, len(a.model.x))
	var cands []candidate
	add := func(v []float64) {
		u := a.space.unit(v)
		cands = append(cands, candidate{u, a.ei(u)})
	}
	for range a.random {
		add(a.space.feasible(randomUnit(d, a.rng)))
	}
	// Moves around the incumbents, at steps from a fifth of the model's
	// length scales down to a fiftieth, and so longest along the knobs the
	// objective varies least with.
	for _, c := range around {
		for _, step := range moveSteps {
			for range movesPerStep {
				u := make([]float64, d)
				for j := range u {
					u[j] = c[j] + step*a.model.ls[j]*a.rng.NormFloat64()
				}
				if v := a.space.values(u); a.space.checkOrder(v) == nil {
					add(v)
				}
			}
		}
	}
	sortCandidates(cands)
	for i := 0; i < a.local && i < len(cands); i++ {
		if u, ei, ok := a.polish(cands[i].u); ok && ei > cands[i].ei {
			cands = append(cands, candidate{u, ei})
		}
	}
	sortCandidates(cands)
	return cands
}

// polish runs Nelder-Mead from u on the clamped box and returns the snapped
// point it reaches (its settings decoded and encoded again).
func (a *acquisition) polish(u0 []float64) ([]float64, float64, bool) {
	p := optimize.Problem{Func: func(u []float64) float64 {
		c := make([]float64, len(u))
		for j, x := range u {
			c[j] = clamp01(x)
		}
		if a.space.checkOrder(a.space.values(c)) != nil {
			return 1
		}
		return -a.ei(c)
	}}
	res, err := optimize.Minimize(p, u0, &optimize.Settings{FuncEvaluations: 60 * len(u0)}, &optimize.NelderMead{SimplexSize: 0.05})
	if res == nil || (err != nil && res.F >= 0) {
		return nil, 0, false
	}
	v := a.space.values(res.X)
	if a.space.checkOrder(v) != nil {
		return nil, 0, false
	}
	u := a.space.unit(v)
	return u, a.ei(u), true
}

func sortCandidates(c []candidate) {
	slices.SortStableFunc(c, func(a, b candidate) int {
		switch {
		case a.ei > b.ei:
			return -1
		case a.ei < b.ei:
			return 1
		}
		return 0
	})
}

// standardise returns (y - mean) / sd and the mean and sd (1 when the
// values are all equal).
func standardise(y []float64) ([]float64, float64, float64) {
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var ss float64
	for _, v := range y {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(y)))
	if sd == 0 || math.IsNaN(sd) {
		sd = 1
	}
	z := make([]float64, len(y))
	for i, v := range y {
		z[i] = (v - mean) / sd
	}
	return z, mean, sd
}
