package tune

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMatern52(t *testing.T) {
	tests := []struct{ r, want float64 }{
		{0, 1},
		{1, (1 + math.Sqrt(5) + 5.0/3) * math.Exp(-math.Sqrt(5))},
		{0.3, (1 + math.Sqrt(5)*0.3 + 5*0.09/3) * math.Exp(-math.Sqrt(5)*0.3)},
	}
	for _, tt := range tests {
		if got := matern52(tt.r); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("matern52(%g) = %g, want %g", tt.r, got, tt.want)
		}
	}
}

func sampleData(n, d int, seed uint64, f func([]float64) float64) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = randomUnit(d, rng)
		y[i] = f(x[i])
	}
	return x, y
}

// TestNegLogLikGradient checks the analytic gradient against central
// differences.
func TestNegLogLikGradient(t *testing.T) {
	x, y := sampleData(25, 3, 1, func(u []float64) float64 { return math.Sin(6*u[0]) + u[1]*u[1] - 0.3*u[2] })
	y, _, _ = standardise(y)
	theta := []float64{math.Log(0.4), math.Log(0.8), math.Log(1.5), math.Log(1.2), math.Log(0.02)}
	grad := make([]float64, len(theta))
	negLogLik(x, y, theta, grad)
	for i := range theta {
		const h = 1e-5
		up, down := append([]float64(nil), theta...), append([]float64(nil), theta...)
		up[i] += h
		down[i] -= h
		num := (negLogLik(x, y, up, nil) - negLogLik(x, y, down, nil)) / (2 * h)
		if math.Abs(num-grad[i]) > 1e-4*math.Max(1, math.Abs(num)) {
			t.Errorf("d/dθ[%d]: analytic %g, numeric %g", i, grad[i], num)
		}
	}
}

// TestFitPredicts fits a smooth function of 2 inputs, one of them
// irrelevant, and checks predictions away from the data and the length
// scales the fit found.
func TestFitPredicts(t *testing.T) {
	f := func(u []float64) float64 { return math.Sin(5*u[0]) + 2*u[0] }
	x, y := sampleData(30, 2, 2, f)
	z, mean, sd := standardise(y)
	rng := rand.New(rand.NewPCG(3, 3))
	g, err := fitGP(x, z, nil, 2, hyperBounds.length[0], rng)
	if err != nil {
		t.Fatal(err)
	}
	if g.ls[1] < 3*g.ls[0] {
		t.Errorf("length scales %v: the irrelevant input should have a much longer one", g.ls)
	}
	var worst float64
	for _, u := range [][]float64{{0.1, 0.5}, {0.37, 0.9}, {0.62, 0.1}, {0.88, 0.4}} {
		m, s := g.predict(u, nil)
		got := m*sd + mean
		worst = math.Max(worst, math.Abs(got-f(u)))
		if s <= 0 || math.IsNaN(s) {
			t.Errorf("sd at %v = %g", u, s)
		}
	}
	if worst > 0.05 {
		t.Errorf("worst prediction error %g, want below 0.05 (function range about 2.6)", worst)
	}
	// At a training point the posterior sd is small; far out it is near the
	// signal's.
	_, near := g.predict(x[0], nil)
	_, far := g.predict([]float64{3, 3}, nil)
	if near > 0.2*far {
		t.Errorf("sd at a training point %g, far away %g: want near much smaller", near, far)
	}
}

// TestFitRepeatedPoints needs the jitter: the same point measured many
// times with almost no noise.
func TestFitRepeatedPoints(t *testing.T) {
	var x [][]float64
	var y []float64
	for i := range 12 {
		x = append(x, []float64{0.5, 0.5})
		y = append(y, 1+1e-9*float64(i))
		x = append(x, []float64{0.2, 0.8})
		y = append(y, 2)
	}
	z, _, _ := standardise(y)
	theta := []float64{math.Log(0.5), math.Log(0.5), 0, hyperBounds.noise[0]}
	if _, err := newGP(x, z, theta); err != nil {
		t.Fatalf("newGP with repeated points: %v", err)
	}
	if _, err := fitGP(x, z, nil, 1, hyperBounds.length[0], rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatalf("fitGP with repeated points: %v", err)
	}
}

func TestExpectedImprovement(t *testing.T) {
	// Far below the incumbent with little doubt: EI is the improvement.
	if got := expectedImprovement(-2, 1e-6, 0); math.Abs(got-2) > 1e-9 {
		t.Errorf("EI(mean -2, sd ~0, target 0) = %g, want 2", got)
	}
	// Far above: nothing.
	if got := expectedImprovement(5, 0.1, 0); got > 1e-12 {
		t.Errorf("EI(mean 5, sd 0.1, target 0) = %g, want about 0", got)
	}
	// More doubt, more EI at the same mean.
	if a, b := expectedImprovement(0, 0.1, 0), expectedImprovement(0, 1, 0); !(b > a) {
		t.Errorf("EI with sd 1 (%g) should exceed EI with sd 0.1 (%g)", b, a)
	}
}

// TestNegLogLengthPriorGradient checks the prior's gradient against
// central differences, and that it is least at the prior's median.
func TestNegLogLengthPriorGradient(t *testing.T) {
	logLS := []float64{math.Log(0.05), math.Log(0.5), math.Log(4)}
	grad := make([]float64, len(logLS))
	negLogLengthPrior(logLS, grad)
	for i := range logLS {
		const h = 1e-5
		up, down := append([]float64(nil), logLS...), append([]float64(nil), logLS...)
		up[i] += h
		down[i] -= h
		g := make([]float64, len(logLS))
		num := (negLogLengthPrior(up, g) - negLogLengthPrior(down, g)) / (2 * h)
		if math.Abs(num-grad[i]) > 1e-6*math.Max(1, math.Abs(num)) {
			t.Errorf("d/dlog ls[%d]: analytic %g, numeric %g", i, grad[i], num)
		}
	}
	if grad[1] != 0 || grad[0] >= 0 || grad[2] <= 0 {
		t.Errorf("gradient %v: want 0 at the median, pulling both others towards it", grad)
	}
}

func TestImprovementMargin(t *testing.T) {
	tests := []struct{ sn2, want float64 }{
		{1e-6, minMargin}, // almost no noise: the least margin
		{0.04, 0.2},       // the noise's standard deviation
	}
	for _, tt := range tests {
		if got := improvementMargin(tt.sn2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("improvementMargin(%g) = %g, want %g", tt.sn2, got, tt.want)
		}
	}
}
