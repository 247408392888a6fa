package autotune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/compare"
	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/tune"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// Budget bounds a search: Trials trials at most (besides the baseline),
// and no trial starts after Time (0: no bound); Initial of them are
// space-filling (0: tune.DefaultInitial, at most Trials).
type Budget struct {
	Trials  int
	Time    time.Duration
	Initial int
}

// Guard says when a trial is stopped early and counted infeasible, besides
// a server that exits or stops answering (always): the p99 of one of its
// seconds after the warm-up passes P99Factor times the baseline's worst
// second's (at least its whole p99), or its whole p99 passes P99Factor
// times the baseline's (0: never), or its rate falls more than Behind (a
// fraction: 0.1 is 10%) below the workload's rate (0: never).
type Guard struct {
	P99Factor float64
	Behind    float64
}

// DefaultGuard is the guard of a search that gives none.
var DefaultGuard = Guard{P99Factor: 10, Behind: 0.1}

// DefaultTrials is the number of trials of a budget that gives none.
const DefaultTrials = 12

// DefaultWarmUp is the warm-up of a search that gives none, and
// MaxWarmUp bounds it.
const (
	DefaultWarmUp = 5 * time.Second
	MaxWarmUp     = time.Hour
)

// MaxTrials bounds a budget's trials and MaxConfirm the confirmation
// rounds.
const (
	MaxTrials  = 500
	MaxConfirm = 50
)

// Config is a search.
type Config struct {
	Server    *engine.Server
	Knobs     []Range
	Workload  workload.Spec // run once per trial, as m:workload runs it
	Objective Objective
	Budget    Budget
	Guard     Guard
	// Confirm is the number of confirmation rounds of the best setting
	// and of the baseline each (0: none).
	Confirm int
	// KeepBest leaves a setting the confirmation found better on the
	// server; else the server gets its settings before the search back.
	KeepBest bool
	// WarmUp is how long the workload runs, unmeasured, right before the
	// baseline (and on a server started again after a failed trial), so
	// that the baseline, which runs first after the load, does not pay for
	// a cold cache and new connections the trials do not (0: none).
	WarmUp time.Duration
	Seed   uint64
	// Progress, if set, gives the progress callback of each step and the
	// function that ends it.
	Progress func(step string, bound time.Duration) (update func(done, total int64), end func())
}

// Trial status words besides record.StatusOK and record.StatusFailed: a
// trial measured but outside the objective's limits.
const StatusInfeasible = "infeasible"

// Phases of a search's trials.
const (
	PhaseBaseline = "baseline"
	PhaseSearch   = "search"
	PhaseConfirm  = "confirm"
)

// Result is what a search found.
type Result struct {
	Search    int                `json:"search"`
	Measure   string             `json:"measure"`
	Best      map[string]float64 `json:"best"` // nil when no trial was measured
	BestTrial int                `json:"best_trial"`
	Baseline  map[string]float64 `json:"baseline"`
	Trials    []record.TuneTrial `json:"trials"`
	Confirm   []record.TuneTrial `json:"confirm"`
	Verdict   string             `json:"verdict"`
	// ImprovementPct is how much better the best setting did than the
	// baseline in the confirmation (in the objective's direction: 12 is
	// 12% better), P the test's p-value; nil without a confirmation.
	ImprovementPct *float64 `json:"improvement_pct"`
	P              *float64 `json:"p"`
	// Stopped says why the search ended before its budget of trials.
	Stopped string `json:"stopped,omitempty"`
	Kept    bool   `json:"kept"`
}

// KeptDetail is what the changes a search kept on a server wtd did not
// start say (wtd show, wtd restore).
const KeptDetail = "kept by tune{} (keep_best)"

// GuardError is why a guard stopped a trial.
type GuardError struct{ Reason string }

func (e *GuardError) Error() string { return "guard: " + e.Reason }

// search is one Run's state.
type search struct {
	run     *engine.Run
	cfg     Config
	space   *tune.Space
	better  compare.Better
	unit    string
	base    tune.Settings
	baseP99 float64 // ms; 0 when not measured
	// baseSecondP99 is the highest p99 of a second of the baseline after
	// its warm-up (ms; 0 when not measured): what the guard holds each
	// second of a trial against.
	baseSecondP99 float64
	apply         applier
	n             int // the search's number in the run
	// measuredBest is the best objective a trial of the search measured
	// (nil: none measured), whichever trial is confirmed.
	measuredBest *float64
	insert       int64
}

// Check checks a search's configuration before anything runs: the knobs
// and ranges (NewSpace), the objective and its limits, the budget, the
// guard, and that a knob needing a restart is on a server wtd can restart.
func Check(cfg Config) (*tune.Space, error) {
	if cfg.Server == nil {
		return nil, errors.New("no server")
	}
	return CheckFor(cfg, cfg.Server.Name, cfg.Server.Started() || cfg.Server.Service())
}

// CheckFor is Check for the server named server, restartable or not
// (cfg.Server is not read): wtd check checks a search with it.
func CheckFor(cfg Config, server string, restartable bool) (*tune.Space, error) {
	space, err := NewSpace(cfg.Knobs)
	if err != nil {
		return nil, err
	}
	if _, _, err := checkObjective(cfg.Objective); err != nil {
		return nil, err
	}
	b := cfg.Budget
	if b.Trials < 1 || b.Trials > MaxTrials {
		return nil, fmt.Errorf("budget: trials %d out of range [1, %d]", b.Trials, MaxTrials)
	}
	if b.Initial < 0 || b.Initial > b.Trials {
		return nil, fmt.Errorf("budget: initial %d out of range [0, trials = %d]", b.Initial, b.Trials)
	}
	if b.Time < 0 {
		return nil, fmt.Errorf("budget: time %s is negative", b.Time)
	}
	if cfg.Guard.P99Factor != 0 && !(cfg.Guard.P99Factor > 1) {
		return nil, fmt.Errorf("guard: p99_factor %g: want more than 1 (0: no p99 guard)", cfg.Guard.P99Factor)
	}
	if !(cfg.Guard.Behind >= 0 && cfg.Guard.Behind < 1) {
		return nil, fmt.Errorf("guard: behind %g out of range [0, 1) (a fraction of the rate; 0: no rate guard)", cfg.Guard.Behind)
	}
	if cfg.WarmUp < 0 || cfg.WarmUp > MaxWarmUp {
		return nil, fmt.Errorf("warm_up %s out of range [0, %s]", cfg.WarmUp, MaxWarmUp)
	}
	if cfg.Confirm < 0 || cfg.Confirm > MaxConfirm {
		return nil, fmt.Errorf("confirm %d out of range [0, %d]", cfg.Confirm, MaxConfirm)
	}
	var names []string
	for _, k := range space.Knobs() {
		names = append(names, k.Name)
	}
	if needsRestart(names) && !restartable {
		for _, n := range names {
			if hostctl.MustKnob(n).Restart {
				return nil, fmt.Errorf("%s needs a restart, and wtd cannot restart %s: it was attached with mongod.connect (use mongod.start or mongod.service)", n, server)
			}
		}
	}
	if _, err := workload.Prepare(cfg.Workload); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return space, nil
}

// Run runs the search on run: the baseline (the server's settings before
// the search) first, then trials as the budget allows, each a step "trial
// N" labelled with its settings, then the confirmation rounds, best and
// baseline by turns (best, baseline, baseline, best, ...), and the
// verdict. A trial that fails (a guard, settings the server refused, a
// server that went down and was started again) is recorded and the search
// goes on; an error is returned when the baseline cannot be measured, the
// run ends, or the server is down for good.
func Run(ctx context.Context, run *engine.Run, cfg Config) (*Result, error) {
	space, err := Check(cfg)
	if err != nil {
		return nil, err
	}
	t := &search{run: run, cfg: cfg, space: space}
	t.better, t.unit, _ = checkObjective(cfg.Objective)
	for _, st := range run.Steps() {
		if st.Name == PhaseBaseline {
			t.n++
		}
	}
	t.n++
	var names []string
	for _, k := range space.Knobs() {
		names = append(names, k.Name)
	}
	all, err := inForce(ctx, cfg.Server, append(names, ruleKnobs(space)...))
	if err != nil {
		return nil, fmt.Errorf("the server's settings before the search: %w", err)
	}
	if err := checkFixed(space, all); err != nil {
		return nil, err
	}
	mark, err := run.ChangeMark(ctx)
	if err != nil {
		return nil, err
	}
	t.base = tune.Settings{}
	restartKnobs := tune.Settings{}
	for _, n := range names {
		t.base[n] = all[n]
		if hostctl.MustKnob(n).Restart {
			restartKnobs[n] = all[n]
		}
	}
	t.apply = applier{s: cfg.Server, current: restartKnobs}
	res := &Result{Search: t.n, Measure: cfg.Objective.Measure, Baseline: t.base, Trials: []record.TuneTrial{}, Confirm: []record.TuneTrial{}}
	run.Eventf("info", record.SourceTune, "search %d: %d knobs, baseline %s, up to %d trials, %s %s", t.n, len(names),
		SettingsText(space, t.base), cfg.Budget.Trials, map[bool]string{true: "maximising", false: "minimising"}[t.better == compare.HigherIsFaster], cfg.Objective.Measure)

	found, err := t.searchTrials(ctx, res)
	if err == nil {
		err = t.confirm(ctx, res, found)
	}
	if err != nil {
		// Whatever stopped the search, the server gets its settings back
		// (the run's end puts back what this could not).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if rerr := t.apply.apply(rctx, t.base); rerr != nil {
			run.Eventf("warn", record.SourceTune, "put the settings before the search back: %v", rerr)
		}
		return res, err
	}
	end := t.base
	if cfg.KeepBest && res.ImprovementPct != nil && res.Best != nil && t.confirmedBetter(res) {
		end, res.Kept = res.Best, true
		t.apply.keep = true
	}
	if err := t.apply.apply(ctx, end); err != nil {
		return res, fmt.Errorf("put the settings %s on the server at the end: %w", SettingsText(space, end), err)
	}
	if res.Kept && !cfg.Server.Started() {
		// On a server wtd did not start each trial's change was recorded
		// to be put back at the run's end: the search's changes are kept
		// instead, so that the best setting stays.
		n, err := cfg.Server.KeepChangesSince(ctx, mark, KeptDetail)
		if err != nil {
			return res, err
		}
		run.Eventf("info", record.SourceTune, "keep_best: %s stays on %s (%d changes of the search recorded as kept)", SettingsText(space, end), cfg.Server.Name, n)
	}
	run.RecordTuneVerdict(record.TuneVerdict{Search: t.n, Measure: res.Measure, Best: res.Best, Baseline: res.Baseline, BestTrial: res.BestTrial,
		Verdict: res.Verdict, ImprovementPct: res.ImprovementPct, P: res.P, ConfirmSteps: confirmSteps(res.Confirm), Kept: res.Kept})
	return res, nil
}

func confirmSteps(trials []record.TuneTrial) []int {
	out := []int{}
	for _, t := range trials {
		if t.Step > 0 {
			out = append(out, t.Step)
		}
	}
	return out
}

// searchTrials measures the baseline and runs the budget's trials; it
// returns the best measured trial (nil: none).
func (t *search) searchTrials(ctx context.Context, res *Result) (*record.TuneTrial, error) {
	cfg := t.cfg
	dir := tune.Minimize
	if t.better == compare.HigherIsFaster {
		dir = tune.Maximize
	}
	opt, err := tune.New(tune.Config{Space: t.space, Direction: dir, Initial: cfg.Budget.Initial, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	if cfg.WarmUp > 0 {
		if err := t.warmUp(ctx, cfg.WarmUp); err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, fmt.Errorf("the warm-up before the baseline: %w", err)
		}
		t.run.Eventf("info", record.SourceTune, "server %s warmed up before the baseline (%s of the workload, not measured)", cfg.Server.Name, cfg.WarmUp)
	}
	base, _, err := t.trial(ctx, PhaseBaseline, PhaseBaseline, 0, t.base, nil, false)
	if err != nil {
		return nil, err
	}
	res.Trials = append(res.Trials, base)
	if base.Status == record.StatusFailed || base.Objective == nil {
		return nil, fmt.Errorf("the baseline could not be measured: %s", base.Reason)
	}
	if base.Status != record.StatusOK {
		t.run.Eventf("warn", record.SourceTune, "the baseline breaks the objective's limits: %s", base.Reason)
	}
	if t.space.Check(t.base) == nil {
		if _, err := opt.Observe(t.base, outcome(base)); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	var best *record.TuneTrial
	if base.Status == record.StatusOK {
		b := base
		best = &b
	}
	for n := 1; n <= cfg.Budget.Trials; n++ {
		if cfg.Budget.Time > 0 && time.Since(start) >= cfg.Budget.Time {
			res.Stopped = fmt.Sprintf("the time budget of %s was spent after %d trials", cfg.Budget.Time, n-1)
			break
		}
		p, err := opt.Next()
		if errors.Is(err, tune.ErrExhausted) {
			res.Stopped = fmt.Sprintf("every setting of the space was tried after %d trials", n-1)
			break
		}
		if err != nil {
			return best, err
		}
		tr, down, err := t.trial(ctx, fmt.Sprintf("trial %d", n), PhaseSearch, n, p.Settings, nil, true)
		tr.Source = string(p.Source)
		if err != nil {
			return best, err
		}
		res.Trials = append(res.Trials, tr)
		if err := opt.Tell(p.N, outcome(tr)); err != nil {
			return best, err
		}
		if tr.Status == record.StatusOK && (best == nil || t.isBetter(*tr.Objective, *best.Objective)) {
			b := tr
			best = &b
		}
		if down != nil {
			res.Stopped = down.Error()
			break
		}
	}
	if best != nil && best.N > 0 {
		t.measuredBest = best.Objective
		best = t.recommend(opt, res, best)
	}
	if best != nil {
		res.Best, res.BestTrial = best.Settings, best.N
	}
	return best, nil
}

// recommend picks the trial to confirm once some trial measured better
// than the baseline: of the search's measured trials, the one the model
// of them all predicts best (the best figure measured, lucky, is more
// often noise than the best setting); measured is that best figure's
// trial, kept when the model has nothing to say.
func (t *search) recommend(opt *tune.Optimizer, res *Result, measured *record.TuneTrial) *record.TuneTrial {
	baseText := SettingsText(t.space, t.base)
	pick, predicted, ok := opt.Recommend(func(tr tune.Trial) bool { return SettingsText(t.space, tr.Settings) != baseText })
	if !ok {
		return measured
	}
	want := SettingsText(t.space, pick.Settings)
	for _, tr := range res.Trials[1:] {
		if tr.Status != record.StatusOK || tr.Objective == nil || SettingsText(t.space, tr.Settings) != want {
			continue
		}
		if tr.N != measured.N {
			t.run.Eventf("info", record.SourceTune, "search %d: trial %d measured the best %s (%s %s); the model of the %d measured trials predicts trial %d best (%s %s, measured %s %s): trial %d is the best setting",
				t.n, measured.N, res.Measure, compare.FormatValue(measured.Objective), t.unit, measuredCount(res.Trials), tr.N,
				compare.FormatValue(&predicted), t.unit, compare.FormatValue(tr.Objective), t.unit, tr.N)
		}
		b := tr
		return &b
	}
	return measured
}

// measuredCount is the number of trials measured (the baseline's among them).
func measuredCount(trials []record.TuneTrial) int {
	n := 0
	for _, tr := range trials {
		if tr.Status == record.StatusOK && tr.Objective != nil {
			n++
		}
	}
	return n
}

func outcome(tr record.TuneTrial) tune.Outcome {
	if tr.Status != record.StatusOK || tr.Objective == nil {
		return tune.Infeasible(tr.Reason)
	}
	return tune.Value(*tr.Objective)
}

// isBetter reports whether objective a is better than b.
func (t *search) isBetter(a, b float64) bool {
	if t.better == compare.HigherIsFaster {
		return a > b
	}
	return a < b
}

// trial puts set on the server and runs the workload as step name. A
// failed trial is a result (its status and reason), not an error; err is
// only for the run's end. down is set when the server is down for good
// (it went down and could not be started again): no trial can follow.
func (t *search) trial(ctx context.Context, name, phase string, n int, set tune.Settings, labels map[string]any, guarded bool) (tr record.TuneTrial, down error, err error) {
	tr = record.TuneTrial{Search: t.n, N: n, Name: name, Phase: phase, Settings: set, Measure: t.cfg.Objective.Measure, Status: record.StatusOK}
	if phase == PhaseConfirm {
		tr.Name = fmt.Sprintf("confirm %v", labels["setting"])
	}
	defer func() {
		if err == nil {
			t.run.RecordTrial(tr, trialText(t.space, tr, t.unit))
		}
	}()
	fail := func(reason string) {
		tr.Status, tr.Reason = record.StatusFailed, reason
		down = t.recover(ctx)
	}
	if phase != PhaseBaseline {
		if aerr := t.apply.apply(ctx, set); aerr != nil {
			if ctx.Err() != nil {
				return tr, nil, context.Cause(ctx)
			}
			fail("the settings were not taken: " + aerr.Error())
			return tr, down, nil
		}
	}
	if labels == nil {
		labels = map[string]any{}
		for k, v := range set {
			labels[k] = v
		}
	}
	spec := t.cfg.Workload
	if t.insert > 0 {
		spec.InsertStartID = t.insert
	}
	var guard func(workload.Status) error
	if guarded {
		guard = t.guard(spec)
	}
	s := t.cfg.Server
	rec, serr := t.run.Step(ctx, engine.StepSpec{Name: name, Labels: labels, Server: s, NS: spec.NS}, func(ctx context.Context) (any, error) {
		update, end := func(int64, int64) {}, func() {}
		if t.cfg.Progress != nil {
			update, end = t.cfg.Progress(name, spec.Duration)
		}
		defer end()
		return s.GuardedWorkload(ctx, spec, update, guard)
	})
	tr.Step = rec.Seq
	if wr, ok := rec.Result.(workload.Result); ok && wr.NextInsertID > 0 {
		t.insert = wr.NextInsertID
	}
	if serr != nil {
		if ctx.Err() != nil {
			return tr, nil, context.Cause(ctx)
		}
		fail(serr.Error())
		return tr, down, nil
	}
	tr.Objective, _, _ = compare.StepMeasure(rec, t.cfg.Objective.Measure)
	if tr.Objective == nil {
		tr.Status, tr.Reason = record.StatusFailed, t.cfg.Objective.Measure+" was not measured"
		return tr, nil, nil
	}
	p99, _, _ := compare.StepMeasure(rec, "p99")
	switch {
	case phase == PhaseBaseline && p99 != nil:
		t.baseP99 = *p99
		_, seconds := record.MeasuredSecondSeries(rec)
		for _, q := range seconds {
			if q/1000 > t.baseSecondP99 {
				t.baseSecondP99 = q / 1000
			}
		}
	case guarded && p99 != nil && t.cfg.Guard.P99Factor > 0 && t.baseP99 > 0 && *p99 > t.cfg.Guard.P99Factor*t.baseP99:
		tr.Status = record.StatusFailed
		tr.Reason = fmt.Sprintf("guard: p99 %s ms, over %g x the baseline's %s ms", compare.FormatValue(p99), t.cfg.Guard.P99Factor, compare.FormatValue(&t.baseP99))
		return tr, nil, nil
	}
	if wr, ok := rec.Result.(workload.Result); ok && wr.Rate != nil && t.cfg.Guard.Behind > 0 &&
		wr.Rate.AchievedOpsPerSec < wr.Rate.TargetOpsPerSec*(1-t.cfg.Guard.Behind) {
		tr.Status = record.StatusFailed
		tr.Reason = fmt.Sprintf("guard: the load fell behind its rate: %.0f of %.0f ops/s (more than %g%% below)",
			wr.Rate.AchievedOpsPerSec, wr.Rate.TargetOpsPerSec, 100*t.cfg.Guard.Behind)
		return tr, nil, nil
	}
	for _, l := range t.cfg.Objective.SubjectTo {
		v, _, _ := compare.StepMeasure(rec, l.Measure)
		switch {
		case v == nil:
			tr.Status, tr.Reason = StatusInfeasible, fmt.Sprintf("subject_to %s: %s was not measured", l, l.Measure)
		case !l.holds(*v):
			tr.Status, tr.Reason = StatusInfeasible, fmt.Sprintf("subject_to %s: %s was %s", l, l.Measure, compare.FormatValue(v))
		}
		if tr.Status != record.StatusOK {
			break
		}
	}
	return tr, nil, nil
}

// trialText is the event's text of a trial.
func trialText(space *tune.Space, tr record.TuneTrial, unit string) string {
	obj := record.Dash
	if tr.Objective != nil {
		obj = compare.FormatValue(tr.Objective) + " " + unit
	}
	s := fmt.Sprintf("%s %s: %s %s", tr.Name, SettingsText(space, tr.Settings), tr.Measure, obj)
	if tr.Status != record.StatusOK {
		s += " (" + tr.Status + ": " + tr.Reason + ")"
	}
	return s
}

// guard returns the guard of a trial's workload (see Guard).
func (t *search) guard(spec workload.Spec) func(workload.Status) error {
	type point struct {
		at  time.Duration
		ops int64
	}
	var window []point
	g := t.cfg.Guard
	// A second is held against the baseline's worst second (one second's
	// p99 of a sub-millisecond baseline passes ten times its whole p99 on
	// any busy host), and at least against its whole p99.
	ref, what := t.baseP99, "p99"
	if t.baseSecondP99 > ref {
		ref, what = t.baseSecondP99, "worst second's p99"
	}
	return func(st workload.Status) error {
		if p99 := st.LastSecondP99Micros / 1000; g.P99Factor > 0 && ref > 0 && st.LastSecond >= 0 && !st.LastSecondWarmup && p99 > g.P99Factor*ref {
			return &GuardError{Reason: fmt.Sprintf("p99 %s ms in second %d, over %g x the baseline's %s %s ms", compare.FormatValue(&p99), st.LastSecond, g.P99Factor, what, compare.FormatValue(&ref))}
		}
		if g.Behind <= 0 || spec.Rate <= 0 || st.Elapsed < spec.Warmup {
			return nil
		}
		window = append(window, point{st.Elapsed, st.Ops})
		for len(window) > 1 && st.Elapsed-window[0].at > 2*time.Second {
			window = window[1:]
		}
		span := st.Elapsed - window[0].at
		if span < 2*time.Second-guardSlack {
			return nil
		}
		rate := float64(st.Ops-window[0].ops) / span.Seconds()
		if rate < spec.Rate*(1-g.Behind) {
			return &GuardError{Reason: fmt.Sprintf("the load fell behind its rate: %.0f of %.0f ops/s over the last %.1f s", rate, spec.Rate, span.Seconds())}
		}
		return nil
	}
}

// guardSlack lets the rate guard's window be a status late.
const guardSlack = 300 * time.Millisecond

// recover brings the server back after a failed trial: nothing when it
// answers; a server wtd can restart is started again with the knobs that
// need a restart at the baseline's values. It returns an error when the
// server is down for good.
func (t *search) recover(ctx context.Context) error {
	s := t.cfg.Server
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := s.Command(pctx, bson.D{{Key: "ping", Value: 1}})
	cancel()
	if err == nil {
		return nil
	}
	if !s.Started() && !s.Service() {
		return fmt.Errorf("server %s does not answer and wtd cannot start a server it attached to again: %v", s.Name, err)
	}
	var ch hostctl.SettingsChange
	for name := range t.apply.current {
		if cerr := ch.Set(hostctl.MustKnob(name).Option, t.base[name]); cerr != nil {
			return cerr
		}
	}
	t.run.Eventf("warn", record.SourceTune, "server %s does not answer after the trial (%v): starting it again", s.Name, err)
	if rerr := s.Restart(ctx, engine.ServerChanges{SettingsChange: ch}); rerr != nil {
		return fmt.Errorf("server %s did not come back: %w", s.Name, rerr)
	}
	for name := range t.apply.current {
		t.apply.current[name] = t.base[name]
	}
	// A server started again after a crash recovers and has a cold cache:
	// the workload runs once unmeasured so that the next trial does not
	// pay for it.
	d := max(2*time.Second, t.cfg.WarmUp, t.cfg.Workload.Warmup)
	if werr := t.warmUp(ctx, d); werr != nil {
		return fmt.Errorf("server %s was started again but its warm-up failed: %w", s.Name, werr)
	}
	t.run.Eventf("info", record.SourceTune, "server %s started again and warmed up (%s of the workload, not measured)", s.Name, d)
	return nil
}

// warmUp runs the search's workload for d, with its options (rate, mix,
// threads) but no warm-up of its own and no step: nothing of it is
// measured.
func (t *search) warmUp(ctx context.Context, d time.Duration) error {
	warm := t.cfg.Workload
	warm.Ops, warm.Duration, warm.Warmup, warm.WarmupOps = 0, d, 0, 0
	if t.insert > 0 {
		warm.InsertStartID = t.insert
	}
	update, end := func(int64, int64) {}, func() {}
	if t.cfg.Progress != nil {
		update, end = t.cfg.Progress("warm-up", d)
	}
	defer end()
	wr, err := t.cfg.Server.Workload(ctx, warm, update)
	if err != nil {
		return err
	}
	if wr.NextInsertID > 0 {
		t.insert = wr.NextInsertID
	}
	return nil
}

// confirm runs the confirmation rounds and words the verdict.
func (t *search) confirm(ctx context.Context, res *Result, best *record.TuneTrial) error {
	if v, done := t.unconfirmed(res, best); done {
		res.Verdict = v
		return nil
	}
	var bestSteps, baseSteps []record.StepRecord
	bySeq := func(seq int) (record.StepRecord, bool) {
		for _, st := range t.run.Steps() {
			if st.Seq == seq {
				return st, true
			}
		}
		return record.StepRecord{}, false
	}
	for round := 1; round <= t.cfg.Confirm; round++ {
		order := []string{"best", "baseline"}
		if round%2 == 0 {
			order = []string{"baseline", "best"}
		}
		for _, which := range order {
			set := t.base
			if which == "best" {
				set = best.Settings
			}
			tr, down, err := t.trial(ctx, "confirm", PhaseConfirm, round, set, map[string]any{"setting": which, "round": round}, false)
			if err != nil {
				return err
			}
			res.Confirm = append(res.Confirm, tr)
			if st, ok := bySeq(tr.Step); ok {
				if which == "best" {
					bestSteps = append(bestSteps, st)
				} else {
					baseSteps = append(baseSteps, st)
				}
			}
			if tr.Status == record.StatusFailed {
				res.Verdict = fmt.Sprintf("the confirmation failed (%s round %d: %s): no verdict", which, round, tr.Reason)
				if down != nil {
					return down
				}
				return nil
			}
		}
	}
	row := compare.Steps(t.run.ID, "confirm", baseSteps, bestSteps, compare.Options{})
	mr, ok := row.Measure(res.Measure)
	if !ok {
		res.Verdict = fmt.Sprintf("the confirmation measured no %s: no verdict", res.Measure)
		return nil
	}
	t.confirmed(res, best.Settings, mr)
	return nil
}

// unconfirmed words the verdict of a search that has no confirmation to
// run (done): nothing measured, no trial better than the baseline (the
// first trial of res), or confirm = 0.
func (t *search) unconfirmed(res *Result, best *record.TuneTrial) (verdict string, done bool) {
	base := res.Trials[0]
	measured := t.measuredBest
	if measured == nil && best != nil {
		measured = best.Objective
	}
	switch {
	case best == nil:
		return "no setting was measured: no verdict", true
	case best.N == 0 || !t.isBetter(*measured, *base.Objective):
		return fmt.Sprintf("no setting beat the baseline beyond noise: none of %d trials measured a better %s than the baseline's %s %s",
			len(res.Trials)-1, res.Measure, compare.FormatValue(base.Objective), t.unit), true
	case t.cfg.Confirm == 0:
		pct := t.improvement(*base.Objective, *best.Objective)
		return fmt.Sprintf("best setting %s measured %.1f%% better in %s than the baseline in one trial (not confirmed: confirm = 0)",
			SettingsText(t.space, best.Settings), pct, res.Measure), true
	}
	return "", false
}

// confirmed sets the improvement, p and verdict of res from compare's row
// of the confirmation (the baseline's rounds as A, the best setting's as B).
func (t *search) confirmed(res *Result, best tune.Settings, mr compare.MeasureRow) {
	if mr.ChangePct != nil {
		pct := *mr.ChangePct
		if t.better == compare.LowerIsFaster {
			pct = -pct
		}
		res.ImprovementPct = &pct
	}
	res.P = mr.P
	evidence := testWords(mr)
	switch {
	case mr.Verdict == compare.Faster && res.ImprovementPct != nil:
		res.Verdict = fmt.Sprintf("best setting %s is %.1f%% better in %s than the baseline (%s)", SettingsText(t.space, best), *res.ImprovementPct, res.Measure, evidence)
	case mr.Small && mr.ChangePct != nil:
		res.Verdict = fmt.Sprintf("no setting beat the baseline beyond noise: the best setting %s differs by %.1f%% in %s, below the %g%% compare calls a difference (%s)",
			SettingsText(t.space, best), math.Abs(*mr.ChangePct), res.Measure, 100*compare.DefaultMinChange, evidence)
	default:
		change := record.Dash
		if mr.ChangePct != nil {
			change = fmt.Sprintf("%+.1f%%", *mr.ChangePct)
		}
		res.Verdict = fmt.Sprintf("no setting beat the baseline beyond noise: the best setting %s changed %s by %s in the confirmation (%s: %s)",
			SettingsText(t.space, best), res.Measure, change, evidence, mr.Verdict)
	}
}

// confirmedBetter reports whether the confirmation found the best setting
// better.
func (t *search) confirmedBetter(res *Result) bool {
	return res.P != nil && *res.P < compare.DefaultAlpha && *res.ImprovementPct >= 100*compare.DefaultMinChange
}

// improvement is how much better b is than a, in percent of a.
func (t *search) improvement(a, b float64) float64 {
	if a == 0 {
		return math.NaN()
	}
	pct := 100 * (b/a - 1)
	if t.better == compare.LowerIsFaster {
		pct = -pct
	}
	return pct
}

// testWords words a measure's test: "Mann-Whitney p = 0.0021, 6/6 values".
func testWords(mr compare.MeasureRow) string {
	switch {
	case mr.P != nil:
		return fmt.Sprintf("Mann-Whitney p = %.2g, %d/%d values", *mr.P, mr.NA, mr.NB)
	case mr.CI != nil:
		return fmt.Sprintf("bootstrap interval [%+.1f%%, %+.1f%%]", 100*mr.CI[0], 100*mr.CI[1])
	}
	return mr.Test
}
