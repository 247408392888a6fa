package tune

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// testFunc is a function with a known minimum over a box.
type testFunc struct {
	name  string
	knobs []Knob
	f     func(Settings) float64
	min   float64 // the known global minimum
}

// tolerance is what "within 5% of the optimum" means here: within 5% of
// |min|. Both functions' minima are well away from 0 (0.397887 and
// -3.32237); a function whose minimum is 0 would need another scale, such
// as its range over the box.
func (tf testFunc) tolerance() float64 { return 0.05 * math.Abs(tf.min) }

var branin = testFunc{
	name:  "Branin",
	knobs: []Knob{{Name: "x1", Lo: -5, Hi: 10}, {Name: "x2", Lo: 0, Hi: 15}},
	min:   0.397887,
	f: func(s Settings) float64 {
		x1, x2 := s["x1"], s["x2"]
		b, c, tt := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
		a := x2 - b*x1*x1 + c*x1 - 6
		return a*a + 10*(1-tt)*math.Cos(x1) + 10
	},
}

var hartmannA = [4][6]float64{
	{10, 3, 17, 3.5, 1.7, 8},
	{0.05, 10, 17, 0.1, 8, 14},
	{3, 3.5, 1.7, 10, 17, 8},
	{17, 8, 0.05, 10, 0.1, 14},
}

var hartmannP = [4][6]float64{
	{1312, 1696, 5569, 124, 8283, 5886},
	{2329, 4135, 8307, 3736, 1004, 9991},
	{2348, 1451, 3522, 2883, 3047, 6650},
	{4047, 8828, 8732, 5743, 1091, 381},
}

var hartmann6 = testFunc{
	name:  "Hartmann-6",
	knobs: []Knob{{Name: "x1", Lo: 0, Hi: 1}, {Name: "x2", Lo: 0, Hi: 1}, {Name: "x3", Lo: 0, Hi: 1}, {Name: "x4", Lo: 0, Hi: 1}, {Name: "x5", Lo: 0, Hi: 1}, {Name: "x6", Lo: 0, Hi: 1}},
	min:   -3.32237,
	f: func(s Settings) float64 {
		x := [6]float64{s["x1"], s["x2"], s["x3"], s["x4"], s["x5"], s["x6"]}
		return hartmann6At(x)
	},
}

func hartmann6At(x [6]float64) float64 {
	alpha := [4]float64{1, 1.2, 3, 3.2}
	var sum float64
	for i := range 4 {
		var e float64
		for j := range 6 {
			d := x[j] - hartmannP[i][j]*1e-4
			e += hartmannA[i][j] * d * d
		}
		sum += alpha[i] * math.Exp(-e)
	}
	return -sum
}

// TestFunctionsKnownMinima checks the test functions at their known
// minimisers.
func TestFunctionsKnownMinima(t *testing.T) {
	if got := branin.f(Settings{"x1": math.Pi, "x2": 2.275}); math.Abs(got-branin.min) > 1e-5 {
		t.Errorf("Branin(pi, 2.275) = %g, want %g", got, branin.min)
	}
	xs := [6]float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	if got := hartmann6At(xs); math.Abs(got-hartmann6.min) > 1e-4 {
		t.Errorf("Hartmann-6 at its minimiser = %g, want %g", got, hartmann6.min)
	}
}

// noiseSD is the measurement noise of the synthetic trials: each
// observation is f(x)·(1 + 0.05·ε) with ε standard normal, as a latency
// measured again varies by a few percent of itself.
const noiseSD = 0.05

// searchBO runs the optimizer on tf with noisy observations and returns
// the number of evaluations after which a trial's true value was within
// tolerance of the minimum (limit+1 if none was within limit).
func searchBO(tb testing.TB, tf testFunc, seed uint64, initial, limit int) int {
	tb.Helper()
	space, err := NewSpace(tf.knobs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	o, err := New(Config{Space: space, Initial: initial, Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(seed, 99))
	for n := 1; n <= limit; n++ {
		tr, err := o.Next()
		if err != nil {
			tb.Fatal(err)
		}
		v := tf.f(tr.Settings)
		if v-tf.min <= tf.tolerance() {
			return n
		}
		if err := o.Tell(tr.N, Value(v*(1+noiseSD*noise.NormFloat64()))); err != nil {
			tb.Fatal(err)
		}
	}
	return limit + 1
}

// searchRandom is random search: uniform settings until one is within
// tolerance (noise does not matter: the true value decides).
func searchRandom(tf testFunc, seed uint64, limit int) int {
	rng := rand.New(rand.NewPCG(seed, 5))
	set := Settings{}
	for n := 1; n <= limit; n++ {
		for _, k := range tf.knobs {
			set[k.Name] = k.Lo + rng.Float64()*(k.Hi-k.Lo)
		}
		if tf.f(set)-tf.min <= tf.tolerance() {
			return n
		}
	}
	return limit + 1
}

func median(v []int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}
