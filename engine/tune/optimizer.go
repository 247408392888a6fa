package tune

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Direction says whether the objective is to be made small (p99, evictions
// by application threads) or large (ops/s).
type Direction int

const (
	Minimize Direction = iota
	Maximize
)

func (d Direction) String() string {
	if d == Maximize {
		return "maximize"
	}
	return "minimize"
}

// DefaultInitial is the number of space-filling trials when Config.Initial
// is 0.
const DefaultInitial = 6

// Tuning of the method; fixed, so that a seed always gives the same search.
const (
	hyperRestarts = 2    // random restarts of the likelihood fit, besides the previous fit and a default
	randomCands   = 1500 // random feasible candidates per proposal
	localStarts   = 4    // Nelder-Mead polishes of the best candidates
	aroundBest    = 3    // measured points of lowest posterior mean that candidates are moved around
)

// classifierLengthLo bounds the feasibility classifier's length scales
// (as a log) from below: fitted to a step between feasible and infeasible
// settings, the likelihood prefers length scales so short that the
// classifier knows only the points it has seen and between them reverts
// to the share of infeasible trials.
var classifierLengthLo = math.Log(0.15)

// Config says what to search and how.
type Config struct {
	Space     *Space
	Direction Direction
	// Initial is the number of space-filling trials (a Latin hypercube mapped
	// into the constraints) before the model proposes; 0 means DefaultInitial.
	Initial int
	// Seed fixes every random choice: the same seed and the same results
	// give the same proposals.
	Seed uint64
}

// Source says how a trial's settings were chosen.
type Source string

const (
	SourceInitial  Source = "latin hypercube"
	SourceModel    Source = "expected improvement"
	SourceRandom   Source = "random"
	SourceObserved Source = "observed"
)

// Status is where a trial stands.
type Status string

const (
	StatusPending    Status = "pending"    // proposed, no result told yet
	StatusOK         Status = "ok"         // measured: Value holds the objective
	StatusInfeasible Status = "infeasible" // could not be measured: Reason says why
)

// Trial is one proposal and its result.
type Trial struct {
	N        int // 1, 2, ... in the order proposed or observed
	Settings Settings
	Source   Source
	// EI is the expected improvement the model saw at these settings, in
	// the objective's units; nil unless Source is SourceModel.
	EI *float64
	// Why explains a random proposal (what kept the model from proposing).
	Why    string
	Status Status
	Value  *float64 // the objective as told; nil unless Status is StatusOK
	Reason string   // why the trial is infeasible
}

// Outcome is what a trial gave: a value of the objective, or infeasible
// with a reason (a guard stopped it, the server refused the settings or
// broke).
type Outcome struct {
	Value      float64
	Infeasible bool
	Reason     string
}

// Value is the outcome of a measured trial.
func Value(v float64) Outcome { return Outcome{Value: v} }

// Infeasible is the outcome of a trial that could not be measured.
func Infeasible(reason string) Outcome { return Outcome{Infeasible: true, Reason: reason} }

// ErrExhausted is returned by Next when no setting of the space is left
// untried (a small space of integer knobs).
var ErrExhausted = errors.New("tune: every setting of the search space has been tried")

// Optimizer proposes trials one at a time and learns from their outcomes:
// Next, run the trial, Tell; Observe adds a result the optimizer did not
// propose (a baseline). It is not safe for concurrent use.
type Optimizer struct {
	space   *Space
	dir     Direction
	rng     *rand.Rand
	design  [][]float64 // the space-filling settings, in knob order
	trials  []Trial
	units   [][]float64 // each trial's encoded settings
	seen    map[string]bool
	pending int // index of the trial waiting for its outcome, or -1
	// theta and thetaFeas are the last fits' hyperparameters, where the
	// next fits start.
	theta, thetaFeas []float64
}

// New returns an optimizer for cfg with its space-filling design drawn.
func New(cfg Config) (*Optimizer, error) {
	if cfg.Space == nil {
		return nil, errors.New("tune: no search space")
	}
	if cfg.Direction != Minimize && cfg.Direction != Maximize {
		return nil, fmt.Errorf("tune: direction %d is neither Minimize nor Maximize", cfg.Direction)
	}
	n := cfg.Initial
	switch {
	case n < 0:
		return nil, fmt.Errorf("tune: initial = %d; give 1 or more space-filling trials (0 for %d)", n, DefaultInitial)
	case n == 0:
		n = DefaultInitial
	}
	o := &Optimizer{space: cfg.Space, dir: cfg.Direction, seen: map[string]bool{}, pending: -1,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x7475_6e65))}
	picked := map[string]bool{}
	for _, u := range latinHypercube(n, cfg.Space.Dim(), o.rng) {
		v := cfg.Space.feasible(u)
		for try := 0; picked[key(v)] && try < 100; try++ {
			v = cfg.Space.feasible(randomUnit(cfg.Space.Dim(), o.rng))
		}
		if !picked[key(v)] {
			picked[key(v)] = true
			o.design = append(o.design, v)
		}
	}
	return o, nil
}

// key identifies settings in knob order.
func key(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Next proposes the next trial: the space-filling design first, then the
// settings of greatest expected improvement under a Gaussian process fitted
// to every result so far. Its settings always keep the space's
// constraints. The trial waits for Tell before another can be proposed.
func (o *Optimizer) Next() (Trial, error) {
	if o.pending >= 0 {
		return Trial{}, fmt.Errorf("tune: trial %d has no outcome yet; Tell it first", o.trials[o.pending].N)
	}
	t, v, err := o.propose()
	if err != nil {
		return Trial{}, err
	}
	t.N, t.Settings, t.Status = len(o.trials)+1, o.space.settings(v), StatusPending
	o.pending = len(o.trials)
	o.add(t, v)
	return copyTrial(t), nil
}

func (o *Optimizer) add(t Trial, v []float64) {
	o.trials = append(o.trials, t)
	o.units = append(o.units, o.space.unit(v))
	o.seen[key(v)] = true
}

func (o *Optimizer) propose() (Trial, []float64, error) {
	for len(o.design) > 0 {
		v := o.design[0]
		o.design = o.design[1:]
		if !o.seen[key(v)] {
			return Trial{Source: SourceInitial}, v, nil
		}
	}
	x, y, labels := o.data()
	if len(x) < 2 {
		return o.random("fewer than 2 measured trials to model")
	}
	z, _, sd := standardise(y)
	model, err := fitGP(x, z, o.theta, hyperRestarts, hyperBounds.length[0], o.rng)
	if err != nil {
		return o.random(err.Error())
	}
	o.theta = model.theta
	acq := &acquisition{space: o.space, model: model, random: randomCands, local: localStarts, rng: o.rng}
	if o.Infeasible() > 0 {
		c, mean, std := standardise(labels)
		feas, err := fitGP(o.finished(), c, o.thetaFeas, hyperRestarts, classifierLengthLo, o.rng)
		if err != nil {
			return o.random(err.Error())
		}
		o.thetaFeas = feas.theta
		acq.feas = &classifier{model: feas, mean: mean, std: std}
	}
	around, best := incumbents(model, x, aroundBest)
	acq.target = best - improvementMargin(model.sn2)
	for _, c := range acq.maximise(around) {
		v := o.space.values(c.u)
		if !o.seen[key(v)] && o.space.checkOrder(v) == nil {
			ei := c.ei * sd
			return Trial{Source: SourceModel, EI: &ei}, v, nil
		}
	}
	return o.random("every candidate of the model was tried already")
}

// data is what the models learn from: the measured trials' encoded
// settings and objectives (as quantities to minimise), and for every
// finished trial in order, 1 if it was infeasible, else 0.
func (o *Optimizer) data() (x [][]float64, y, labels []float64) {
	for i, t := range o.trials {
		switch t.Status {
		case StatusOK:
			x, y = append(x, o.units[i]), append(y, o.signed(*t.Value))
			labels = append(labels, 0)
		case StatusInfeasible:
			labels = append(labels, 1)
		}
	}
	return x, y, labels
}

// finished is the encoded settings of every trial with an outcome.
func (o *Optimizer) finished() [][]float64 {
	var x [][]float64
	for i, t := range o.trials {
		if t.Status != StatusPending {
			x = append(x, o.units[i])
		}
	}
	return x
}

func (o *Optimizer) signed(v float64) float64 {
	if o.dir == Maximize {
		return -v
	}
	return v
}

// incumbents are the n measured points of lowest posterior mean, lowest
// first, and that mean: the incumbent expected improvement measures
// against. With noise, the best value told is more often a lucky
// measurement than the best setting; the model's mean has averaged the
// noise out.
func incumbents(model *gp, x [][]float64, n int) ([][]float64, float64) {
	means := make([]float64, len(x))
	buf := make([]float64, len(x))
	idx := make([]int, len(x))
	for i, u := range x {
		means[i], _ = model.predict(u, buf)
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(means[a], means[b]) })
	var out [][]float64
	for _, i := range idx[:min(n, len(idx))] {
		out = append(out, x[i])
	}
	return out, means[idx[0]]
}

// random is a feasible setting not tried yet, drawn uniformly in the cube
// and mapped into the constraints.
func (o *Optimizer) random(why string) (Trial, []float64, error) {
	for range 1000 {
		v := o.space.feasible(randomUnit(o.space.Dim(), o.rng))
		if !o.seen[key(v)] {
			return Trial{Source: SourceRandom, Why: why}, v, nil
		}
	}
	return Trial{}, nil, ErrExhausted
}

// Tell records the outcome of trial n, the one Next proposed last.
func (o *Optimizer) Tell(n int, out Outcome) error {
	if o.pending < 0 || o.trials[o.pending].N != n {
		return fmt.Errorf("tune: trial %d is not waiting for an outcome (%s)", n, o.waiting())
	}
	if err := checkOutcome(out); err != nil {
		return fmt.Errorf("tune: trial %d: %w", n, err)
	}
	setOutcome(&o.trials[o.pending], out)
	o.pending = -1
	return nil
}

func (o *Optimizer) waiting() string {
	if o.pending < 0 {
		return "none is"
	}
	return fmt.Sprintf("trial %d is", o.trials[o.pending].N)
}

func checkOutcome(out Outcome) error {
	if !out.Infeasible && (math.IsNaN(out.Value) || math.IsInf(out.Value, 0)) {
		return fmt.Errorf("objective %s is not a finite number; tell Infeasible with a reason instead", num(out.Value))
	}
	return nil
}

func setOutcome(t *Trial, out Outcome) {
	if out.Infeasible {
		t.Status, t.Reason = StatusInfeasible, out.Reason
		if t.Reason == "" {
			t.Reason = "infeasible"
		}
		return
	}
	v := out.Value
	t.Status, t.Value = StatusOK, &v
}

// Observe records the outcome of settings the optimizer did not propose,
// such as the server's settings before the search; they must be a point of
// the space. It returns the trial as recorded.
func (o *Optimizer) Observe(set Settings, out Outcome) (Trial, error) {
	if err := o.space.Check(set); err != nil {
		return Trial{}, fmt.Errorf("tune observe: %w", err)
	}
	if err := checkOutcome(out); err != nil {
		return Trial{}, fmt.Errorf("tune observe: %w", err)
	}
	v := o.space.ordered(set)
	t := Trial{N: len(o.trials) + 1, Settings: o.space.settings(v), Source: SourceObserved}
	setOutcome(&t, out)
	o.add(t, v)
	return copyTrial(t), nil
}

// Trials returns every trial so far, in order.
func (o *Optimizer) Trials() []Trial {
	out := make([]Trial, len(o.trials))
	for i, t := range o.trials {
		out[i] = copyTrial(t)
	}
	return out
}

// Best returns the measured trial with the best objective as told (the
// first of equals); ok is false when no trial was measured.
func (o *Optimizer) Best() (t Trial, ok bool) {
	best := -1
	for i, tr := range o.trials {
		if tr.Status == StatusOK && (best < 0 || o.signed(*tr.Value) < o.signed(*o.trials[best].Value)) {
			best = i
		}
	}
	if best < 0 {
		return Trial{}, false
	}
	return copyTrial(o.trials[best]), true
}

// Recommend returns, of the measured trials that among accepts (nil: all),
// the one a Gaussian process fitted to every measured trial predicts
// best, and that prediction (the posterior mean, in the objective's
// units). With noise the best value told is more often a lucky
// measurement than the best setting, and a second measurement of it
// regresses; the model's mean pools each trial with its neighbours. With
// fewer than 3 measured trials, or when the model cannot be fitted, it is
// the best value told among those accepted. ok is false when none is.
func (o *Optimizer) Recommend(among func(Trial) bool) (t Trial, predicted float64, ok bool) {
	accept := func(tr Trial) bool { return tr.Status == StatusOK && (among == nil || among(tr)) }
	told := func() (Trial, float64, bool) {
		best := -1
		for i, tr := range o.trials {
			if accept(tr) && (best < 0 || o.signed(*tr.Value) < o.signed(*o.trials[best].Value)) {
				best = i
			}
		}
		if best < 0 {
			return Trial{}, 0, false
		}
		return copyTrial(o.trials[best]), *o.trials[best].Value, true
	}
	x, y, _ := o.data()
	if len(x) < 3 {
		return told()
	}
	z, mean, sd := standardise(y)
	model, err := fitGP(x, z, o.theta, hyperRestarts, hyperBounds.length[0], o.rng)
	if err != nil {
		return told()
	}
	best, bestMean := -1, math.Inf(1)
	buf := make([]float64, len(x))
	for i, tr := range o.trials {
		if !accept(tr) {
			continue
		}
		m, _ := model.predict(o.units[i], buf)
		if m < bestMean {
			best, bestMean = i, m
		}
	}
	if best < 0 {
		return Trial{}, 0, false
	}
	return copyTrial(o.trials[best]), o.signed(bestMean*sd + mean), true
}

// Infeasible is the number of trials told infeasible.
func (o *Optimizer) Infeasible() int {
	n := 0
	for _, t := range o.trials {
		if t.Status == StatusInfeasible {
			n++
		}
	}
	return n
}

// Space is the optimizer's search space.
func (o *Optimizer) Space() *Space { return o.space }

func copyTrial(t Trial) Trial {
	set := make(Settings, len(t.Settings))
	for k, v := range t.Settings {
		set[k] = v
	}
	t.Settings = set
	if t.Value != nil {
		v := *t.Value
		t.Value = &v
	}
	if t.EI != nil {
		e := *t.EI
		t.EI = &e
	}
	return t
}
