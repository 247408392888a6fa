// Package tune owns the optimiser behind tune{}: Bayesian optimisation over
// a search space of knobs, with no Lua, no server and no store.
//
// A Space is the knobs (a range each, integer or not, log scale or not) and
// the order constraints between them (eviction_dirty_target <
// eviction_dirty_trigger, eviction.threads_min <= eviction.threads_max);
// NewSpace refuses a space where the constraints cannot hold, naming the
// knobs. Settings are encoded into the unit cube, one coordinate per knob.
//
// An Optimizer asks and is told, one trial at a time:
//
//	o, err := tune.New(tune.Config{Space: space, Direction: tune.Minimize, Initial: 6, Seed: 1})
//	for range trials {
//		t, err := o.Next()      // t.N, t.Settings
//		p99, err := measure(t.Settings)
//		if err != nil {
//			o.Tell(t.N, tune.Infeasible(err.Error()))
//		} else {
//			o.Tell(t.N, tune.Value(p99))
//		}
//	}
//	best, ok := o.Best()
//
// The method: the first Initial trials are a Latin hypercube; then a
// Gaussian process (zero mean on standardised objectives, a Matérn 5/2
// kernel with one length scale per knob, a signal and a noise variance,
// hyperparameters by maximum marginal likelihood times a log-normal prior
// on the length scales, with L-BFGS from the previous fit and random
// restarts, within bounds) models the results, and the next trial
// maximises expected improvement over the incumbent, the lowest posterior
// mean among the measured trials, by more than the model's noise (random
// feasible candidates, moves around the incumbents scaled by the length
// scales, Nelder-Mead from the best few).
//
// Constraints are kept by construction, never by luck: designs and random
// candidates go through a map from the cube onto settings that keep every
// constraint (each knob drawn within what the knobs below it leave), and a
// local optimisation that decodes to settings breaking one scores nothing
// there, so no proposal ever breaks a constraint. Settings are decoded
// (integers rounded) before they are checked, so rounding cannot break one.
//
// Infeasible trials (a guard stopped them, the server refused the settings
// or broke) are counted and steered away from by a feasibility classifier:
// a second Gaussian process fitted to every trial's label (1 infeasible, 0
// measured) gives the probability that settings can be measured;
// expected improvement is weighed by it, and is nothing where it is under
// one half. The objective's model sees the measured trials only, so an
// infeasible trial invents no value. Settings are never proposed twice.
//
// Everything random comes from one math/rand/v2 source seeded by
// Config.Seed, so the same seed and the same outcomes give the same
// proposals.
package tune
