package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestMannWhitneyKnownValues(t *testing.T) {
	// Completely separated 3 and 3: U = 0, and 2 of the 20 arrangements
	// are as extreme: p = 0.1.
	if u, p := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6}); u != 0 || !near(p, 0.1, 1e-12) {
		t.Errorf("3 vs 3 separated: U %v p %v", u, p)
	}
	// 5 and 5 separated: p = 2/252.
	if _, p := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}); !near(p, 2.0/252, 1e-12) {
		t.Errorf("5 vs 5 separated: p %v", p)
	}
	// Interleaved: U at its mean, p = 1.
	if u, p := MannWhitney([]float64{1, 4, 5, 8}, []float64{2, 3, 6, 7}); u != 8 || !near(p, 1, 1e-12) {
		t.Errorf("interleaved: U %v p %v", u, p)
	}
	// Small samples with ties are counted exactly, not approximated: 3
	// values a side can never reach p < 0.1.
	if _, p := MannWhitney([]float64{653, 653, 653}, []float64{652.9, 652.9, 652.8}); !near(p, 0.1, 1e-12) {
		t.Errorf("3 vs 3 with ties: p %v, want 0.1", p)
	}
	// Exact with ties agrees with the count without ties when the ties
	// are within a sample (ranks 1.5, 1.5, 3 vs 4, 5, 6): p = 0.1.
	if _, p := MannWhitney([]float64{1, 1, 2}, []float64{4, 5, 6}); !near(p, 0.1, 1e-12) {
		t.Errorf("ties within a sample: p %v", p)
	}
	// All equal (ties everywhere): no evidence.
	if _, p := MannWhitney([]float64{5, 5, 5, 5}, []float64{5, 5, 5}); p != 1 {
		t.Errorf("all equal: p %v", p)
	}
	// Large samples use the normal approximation; it agrees with the
	// exact count where both apply (no ties, n = 40).
	x, y := make([]float64, 20), make([]float64, 20)
	for i := range x {
		x[i], y[i] = float64(2*i), float64(2*i+5)
	}
	u, exact := MannWhitney(x, y)
	approx := normalMannWhitney(20, 20, u, 0)
	if !near(exact, approx, 0.01) || exact > 0.5 || exact < 0.05 {
		t.Errorf("exact %v vs normal %v", exact, approx)
	}
}

func TestWelchTKnownValue(t *testing.T) {
	// Means 3 and 4, variances 2.5: t = 1 on 8 degrees of freedom.
	tt, p := WelchT([]float64{1, 2, 3, 4, 5}, []float64{2, 3, 4, 5, 6})
	if !near(tt, 1, 1e-12) || !near(p, 0.34659, 1e-4) {
		t.Errorf("t %v p %v", tt, p)
	}
}

// series draws n per-second throughputs around level with a coefficient
// of variation cv.
func series(rng *rand.Rand, n int, level, cv float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + cv*rng.NormFloat64())
	}
	return out
}

// TestFalsePositiveRateAndPower: on known distributions, a 0% change is
// called "no difference" about 95% of the time at alpha 0.05, and a 10%
// shift is caught, with both tests.
func TestFalsePositiveRateAndPower(t *testing.T) {
	for _, test := range []string{TestMannWhitney, TestBootstrap} {
		trials := 1000
		if test == TestBootstrap {
			trials = 200 // each trial resamples 2000 times
		}
		rng := rand.New(rand.NewPCG(7, 11))
		same, caught := 0, 0
		for range trials {
			a := series(rng, 30, 10000, 0.10)
			if Judge(a, series(rng, 30, 10000, 0.10), HigherIsFaster, 0.05, test).Verdict == NoDifference {
				same++
			}
			if Judge(a, series(rng, 30, 9000, 0.10), HigherIsFaster, 0.05, test).Verdict == Slower {
				caught++
			}
		}
		fpr := 1 - float64(same)/float64(trials)
		power := float64(caught) / float64(trials)
		t.Logf("%s: false positives %.3f, power on a 10%% shift (cv 10%%, 30 values each) %.3f", test, fpr, power)
		if fpr < 0.02 || fpr > 0.08 {
			t.Errorf("%s: false-positive rate %.3f, want about 0.05", test, fpr)
		}
		// The median is a less efficient estimator than the rank test.
		if want := map[string]float64{TestMannWhitney: 0.95, TestBootstrap: 0.85}[test]; power < want {
			t.Errorf("%s: power %.3f on a 10%% shift, want at least %.2f", test, power, want)
		}
	}
}

func TestJudgeWords(t *testing.T) {
	lo := []float64{10, 11, 12, 10, 11, 12, 10, 11}
	hi := []float64{20, 21, 22, 20, 21, 22, 20, 21}
	for _, c := range []struct {
		a, b   []float64
		better Better
		want   string
	}{
		{lo, hi, HigherIsFaster, Faster},
		{hi, lo, HigherIsFaster, Slower},
		{lo, hi, LowerIsFaster, Slower},
		{hi, lo, LowerIsFaster, Faster},
		{lo, hi, Neutral, Higher},
		{hi, lo, Neutral, Lower},
		{lo, lo, HigherIsFaster, NoDifference},
		{lo[:2], hi[:2], HigherIsFaster, NoDifference}, // too few values to tell
	} {
		if got := Judge(c.a, c.b, c.better, 0.05, TestMannWhitney).Verdict; got != c.want {
			t.Errorf("Judge(%v, %v, %v) = %s, want %s", c.a, c.b, c.better, got, c.want)
		}
	}
	j := Judge(lo, hi, HigherIsFaster, 0.05, TestBootstrap)
	if j.CI == nil || j.CI[0] < 0.5 || j.CI[1] > 1.3 || j.Verdict != Faster {
		t.Errorf("bootstrap: %+v", j)
	}
}
