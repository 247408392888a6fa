package tune

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func newOptimizer(t *testing.T, knobs []Knob, cons []Constraint, cfg Config) *Optimizer {
	t.Helper()
	s, err := NewSpace(knobs, cons)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Space = s
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestProposalsKeepConstraints runs searches whose best settings lie on
// the constraints' edges (the objective rewards a dirty target close to
// its trigger and few eviction threads with a high minimum) and checks
// every proposal: within range, integers whole, constraints kept, never a
// setting twice.
func TestProposalsKeepConstraints(t *testing.T) {
	knobs, cons := wtKnobs()
	objective := func(s Settings) float64 {
		gapDirty := s["eviction_dirty_trigger"] - s["eviction_dirty_target"]
		gapClean := s["eviction_trigger"] - s["eviction_target"]
		threads := s["eviction.threads_max"] - s["eviction.threads_min"]
		return gapDirty + gapClean/10 + threads - s["eviction.threads_min"]/5 + math.Abs(math.Log(s["cacheSizeGB"])) + s["checkpoint.wait"]/600
	}
	proposals := 0
	for _, seed := range []uint64{1, 2} {
		o := newOptimizer(t, knobs, cons, Config{Seed: seed, Initial: 8})
		seen := map[string]bool{}
		for range 30 {
			tr, err := o.Next()
			if err != nil {
				t.Fatal(err)
			}
			proposals++
			if err := o.Space().Check(tr.Settings); err != nil {
				t.Fatalf("seed %d trial %d (%s): %v", seed, tr.N, tr.Source, err)
			}
			k := key(o.Space().ordered(tr.Settings))
			if seen[k] {
				t.Fatalf("seed %d trial %d proposes %v again", seed, tr.N, tr.Settings)
			}
			seen[k] = true
			if err := o.Tell(tr.N, Value(objective(tr.Settings))); err != nil {
				t.Fatal(err)
			}
		}
		best, ok := o.Best()
		if !ok {
			t.Fatal("no best trial")
		}
		// The edges: the dirty target one below its trigger.
		if gap := best.Settings["eviction_dirty_trigger"] - best.Settings["eviction_dirty_target"]; gap > 3 {
			t.Errorf("seed %d: best %v leaves the dirty target %g below its trigger; the optimum is 1", seed, best.Settings, gap)
		}
	}
	t.Logf("%d proposals, all within the constraints", proposals)
}

// TestDesignKeepsConstraints draws a large space-filling design (no model)
// in a tight space: ranges that overlap on a few values only.
func TestDesignKeepsConstraints(t *testing.T) {
	knobs := []Knob{
		{Name: "eviction_dirty_target", Lo: 1, Hi: 12, Integer: true},
		{Name: "eviction_dirty_trigger", Lo: 10, Hi: 14, Integer: true},
		{Name: "eviction.threads_min", Lo: 1, Hi: 8, Integer: true},
		{Name: "eviction.threads_max", Lo: 1, Hi: 8, Integer: true},
		{Name: "eviction_target", Lo: 50, Hi: 80},
		{Name: "eviction_trigger", Lo: 79, Hi: 95},
	}
	cons := []Constraint{
		{Lower: "eviction_dirty_target", Upper: "eviction_dirty_trigger", Strict: true},
		{Lower: "eviction.threads_min", Upper: "eviction.threads_max"},
		{Lower: "eviction_target", Upper: "eviction_trigger", Strict: true},
	}
	o := newOptimizer(t, knobs, cons, Config{Seed: 3, Initial: 500})
	for range 500 {
		tr, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		if tr.Source != SourceInitial {
			t.Fatalf("trial %d comes from %s; the design has 500 points", tr.N, tr.Source)
		}
		if err := o.Space().Check(tr.Settings); err != nil {
			t.Fatalf("trial %d: %v", tr.N, err)
		}
		if err := o.Tell(tr.N, Value(float64(tr.N))); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs n trials of f with a seeded optimizer and returns them.
func run(t *testing.T, cfg Config, knobs []Knob, n int, f func(Settings) Outcome) []Trial {
	t.Helper()
	o := newOptimizer(t, knobs, nil, cfg)
	for range n {
		tr, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Tell(tr.N, f(tr.Settings)); err != nil {
			t.Fatal(err)
		}
	}
	return o.Trials()
}

func TestDeterministicForASeed(t *testing.T) {
	noisy := func(seed uint64) func(Settings) Outcome {
		rng := rand.New(rand.NewPCG(seed, 1))
		return func(s Settings) Outcome { return Value(branin.f(s) * (1 + noiseSD*rng.NormFloat64())) }
	}
	a := run(t, Config{Seed: 42}, branin.knobs, 12, noisy(1))
	b := run(t, Config{Seed: 42}, branin.knobs, 12, noisy(1))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same seed gave different searches:\n%v\n%v", a, b)
	}
	if a[11].Source != SourceModel {
		t.Fatalf("trial 12 comes from %s; the comparison should cover the model's proposals", a[11].Source)
	}
	c := run(t, Config{Seed: 43}, branin.knobs, 12, noisy(1))
	if reflect.DeepEqual(a[0].Settings, c[0].Settings) {
		t.Errorf("seeds 42 and 43 start at the same settings %v", a[0].Settings)
	}
}

// TestInfeasibleSteeredAway: settings with x1 above 0.6 break the server.
// The objective's minimum (0.7, 0.3) lies there, so a search that does not
// learn keeps asking for them. Probing the edge, where the feasible
// optimum is, is expected; settings well beyond it are not.
func TestInfeasibleSteeredAway(t *testing.T) {
	knobs := []Knob{{Name: "x1", Lo: 0, Hi: 1}, {Name: "x2", Lo: 0, Hi: 1}}
	f := func(s Settings) Outcome {
		if s["x1"] > 0.6 {
			return Infeasible("server exited")
		}
		return Value(math.Pow(s["x1"]-0.7, 2) + math.Pow(s["x2"]-0.3, 2))
	}
	const initial, n = 6, 30
	for _, seed := range []uint64{5, 6} {
		trials := run(t, Config{Seed: seed, Initial: initial}, knobs, n, f)
		beyond := 0
		for _, tr := range trials {
			if tr.Status == StatusInfeasible {
				if tr.Reason != "server exited" || tr.Value != nil {
					t.Errorf("infeasible trial %d recorded as %+v", tr.N, tr)
				}
			}
			if tr.N > initial && tr.Settings["x1"] > 0.65 {
				beyond++
			}
		}
		// Uniform proposals would land there 35% of the time (8 of 24).
		if beyond > 2 {
			t.Errorf("seed %d: %d of %d model proposals have x1 > 0.65, well inside the broken part; want at most 2", seed, beyond, n-initial)
		}
		best := bestOf(trials)
		if math.Abs(best.Settings["x1"]-0.6) > 0.05 || math.Abs(best.Settings["x2"]-0.3) > 0.05 {
			t.Errorf("seed %d: best %v; the feasible optimum is (0.6, 0.3)", seed, best.Settings)
		}
	}
}

func bestOf(trials []Trial) Trial {
	var best Trial
	for _, tr := range trials {
		if tr.Status == StatusOK && (best.Value == nil || *tr.Value < *best.Value) {
			best = tr
		}
	}
	return best
}

func TestInfeasibleCounted(t *testing.T) {
	o := newOptimizer(t, branin.knobs, nil, Config{Seed: 1, Initial: 3})
	for i := range 5 {
		tr, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		out := Value(branin.f(tr.Settings))
		if i%2 == 0 {
			out = Infeasible("")
		}
		if err := o.Tell(tr.N, out); err != nil {
			t.Fatal(err)
		}
	}
	if got := o.Infeasible(); got != 3 {
		t.Errorf("Infeasible() = %d, want 3", got)
	}
	if tr := o.Trials()[0]; tr.Reason != "infeasible" {
		t.Errorf("an infeasible outcome without a reason is recorded with %q", tr.Reason)
	}
}

// TestMaximize finds Branin's minimum as the maximum of its negation.
func TestMaximize(t *testing.T) {
	trials := run(t, Config{Seed: 2, Direction: Maximize}, branin.knobs, 30, func(s Settings) Outcome { return Value(-branin.f(s)) })
	o := newOptimizer(t, branin.knobs, nil, Config{Direction: Maximize})
	for _, tr := range trials {
		if _, err := o.Observe(tr.Settings, Value(*tr.Value)); err != nil {
			t.Fatal(err)
		}
	}
	best, ok := o.Best()
	if !ok {
		t.Fatal("no best")
	}
	if got := -*best.Value; got > 0.6 {
		t.Errorf("best after 30 trials: Branin %g (%v); the minimum is 0.398", got, best.Settings)
	}
}

func TestProtocolErrors(t *testing.T) {
	o := newOptimizer(t, branin.knobs, nil, Config{Seed: 1})
	if err := o.Tell(1, Value(1)); err == nil || !strings.Contains(err.Error(), "trial 1 is not waiting") {
		t.Errorf("Tell before Next: %v", err)
	}
	tr, err := o.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Next(); err == nil || !strings.Contains(err.Error(), "trial 1 has no outcome yet") {
		t.Errorf("Next twice: %v", err)
	}
	if err := o.Tell(2, Value(1)); err == nil || !strings.Contains(err.Error(), "trial 1 is") {
		t.Errorf("Tell of another trial: %v", err)
	}
	if err := o.Tell(tr.N, Value(math.NaN())); err == nil || !strings.Contains(err.Error(), "NaN is not a finite number") {
		t.Errorf("Tell NaN: %v", err)
	}
	if err := o.Tell(tr.N, Value(3)); err != nil {
		t.Errorf("Tell after refusals: %v", err)
	}
	if err := o.Tell(tr.N, Value(3)); err == nil {
		t.Error("Tell twice accepted")
	}
	if _, err := o.Observe(Settings{"x1": 11, "x2": 1}, Value(1)); err == nil || !strings.Contains(err.Error(), "x1 = 11 is outside its range [-5, 10]") {
		t.Errorf("Observe out of range: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Error("New without a space accepted")
	}
	if _, err := New(Config{Space: o.Space(), Initial: -1}); err == nil || !strings.Contains(err.Error(), "initial = -1") {
		t.Errorf("New with initial -1: %v", err)
	}
}

// TestObserveIsModelled: a baseline observed before the search is a
// trial, and the model's proposals take it into account.
func TestObserveIsModelled(t *testing.T) {
	o := newOptimizer(t, branin.knobs, nil, Config{Seed: 1, Initial: 1})
	base, err := o.Observe(Settings{"x1": math.Pi, "x2": 2.275}, Value(branin.min))
	if err != nil {
		t.Fatal(err)
	}
	if base.N != 1 || base.Source != SourceObserved || base.Status != StatusOK {
		t.Errorf("observed baseline recorded as %+v", base)
	}
	tr, _ := o.Next()
	_ = o.Tell(tr.N, Value(branin.f(tr.Settings)))
	tr, err = o.Next()
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source != SourceModel || tr.EI == nil {
		t.Fatalf("trial 3 comes from %s (EI %v); with two results the model proposes", tr.Source, tr.EI)
	}
	if best, _ := o.Best(); best.N != 1 {
		t.Errorf("best is trial %d, want the observed optimum", best.N)
	}
}

func TestExhausted(t *testing.T) {
	o := newOptimizer(t, []Knob{{Name: "eviction.threads_max", Lo: 1, Hi: 3, Integer: true}}, nil, Config{Seed: 1, Initial: 2})
	got := map[float64]bool{}
	for range 3 {
		tr, err := o.Next()
		if err != nil {
			t.Fatal(err)
		}
		got[tr.Settings["eviction.threads_max"]] = true
		_ = o.Tell(tr.N, Value(tr.Settings["eviction.threads_max"]))
	}
	if len(got) != 3 {
		t.Errorf("three trials tried %v; want 1, 2 and 3", got)
	}
	if _, err := o.Next(); !errors.Is(err, ErrExhausted) {
		t.Errorf("Next after every setting: %v, want ErrExhausted", err)
	}
}

// TestRecommendDiscountsLuck: over noisy measurements of a smooth
// function, the trial the model predicts best is truly better, on
// average over seeds, than the trial of the lowest value told (the
// winner's curse picks the luckiest, not the best); the prediction is
// in the objective's units and way; among restricts the choice.
func TestRecommendDiscountsLuck(t *testing.T) {
	f := func(x float64) float64 { return 1 + 2*(x-0.7)*(x-0.7) }
	knobs := []Knob{{Name: "x", Lo: 0, Hi: 1}}
	for _, dir := range []Direction{Minimize, Maximize} {
		sign := 1.0
		if dir == Maximize {
			sign = -1
		}
		var regretTold, regretModel float64
		const seeds = 20
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 9))
			o := newOptimizer(t, knobs, nil, Config{Direction: dir})
			for i := range 25 {
				x := float64(i) / 24
				if _, err := o.Observe(Settings{"x": x}, Value(sign*(f(x)+0.15*rng.NormFloat64()))); err != nil {
					t.Fatal(err)
				}
			}
			told, _ := o.Best()
			picked, predicted, ok := o.Recommend(nil)
			if !ok {
				t.Fatal("Recommend found nothing")
			}
			regretTold += f(told.Settings["x"]) - 1
			regretModel += f(picked.Settings["x"]) - 1
			if truth := sign * f(picked.Settings["x"]); math.Abs(predicted-truth) > 0.3 { // 2 sd of the noise
				t.Errorf("%s seed %d: predicted %g at x = %g, the function is %g there", dir, seed, predicted, picked.Settings["x"], truth)
			}
			notIt, _, ok := o.Recommend(func(tr Trial) bool { return tr.N != picked.N })
			if !ok || notIt.N == picked.N {
				t.Errorf("%s seed %d: Recommend without trial %d gave trial %d", dir, seed, picked.N, notIt.N)
			}
		}
		t.Logf("%s: mean regret of the lowest told %.4f, of the model's pick %.4f", dir, regretTold/seeds, regretModel/seeds)
		if regretModel >= regretTold {
			t.Errorf("%s: the model's pick (mean regret %.4f) is no better than the value told (%.4f)", dir, regretModel/seeds, regretTold/seeds)
		}
	}
	o := newOptimizer(t, knobs, nil, Config{})
	if _, _, ok := o.Recommend(nil); ok {
		t.Error("Recommend with no trial found one")
	}
	for i, v := range []float64{3, 1} {
		_, _ = o.Observe(Settings{"x": float64(i)}, Value(v))
	}
	if tr, p, _ := o.Recommend(nil); tr.N != 2 || p != 1 {
		t.Errorf("with 2 trials Recommend is the best told: trial %d, %g", tr.N, p)
	}
}
