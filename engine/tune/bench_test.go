package tune

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPropose is the optimizer's own cost per proposal with 60
// measured trials over 6 knobs (the budget: under 1 s): the likelihood fit
// from the previous fit's hyperparameters plus restarts, and the
// acquisition search.
func BenchmarkPropose(b *testing.B) {
	space, err := NewSpace(hartmann6.knobs, nil)
	if err != nil {
		b.Fatal(err)
	}
	o, err := New(Config{Space: space, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(1, 2))
	for range 60 {
		t, err := o.Next()
		if err != nil {
			b.Fatal(err)
		}
		v := hartmann6.f(t.Settings)
		if err := o.Tell(t.N, Value(v*(1+noiseSD*noise.NormFloat64()))); err != nil {
			b.Fatal(err)
		}
	}
	theta := o.theta
	for b.Loop() {
		t, err := o.Next()
		if err != nil {
			b.Fatal(err)
		}
		if len(t.Settings) != 6 {
			b.Fatalf("proposal %v", t.Settings)
		}
		// Forget the proposal: every iteration proposes from the same 60.
		delete(o.seen, key(o.space.ordered(t.Settings)))
		o.trials, o.units, o.pending, o.theta = o.trials[:60], o.units[:60], -1, theta
	}
}
