package autotune

import (
	"strings"
	"testing"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/tune"
)

func pf(v float64) *float64 { return &v }

// verdictSearch is a search over one knob, for the verdict's wording.
func verdictSearch(t *testing.T, measure string, confirm int) (*search, *Result) {
	t.Helper()
	sp, err := NewSpace([]Range{{Knob: "eviction_dirty_target", Lo: 1, Hi: 10}})
	if err != nil {
		t.Fatal(err)
	}
	s := &search{space: sp, cfg: Config{Confirm: confirm, Objective: Objective{Measure: measure}}}
	s.better, s.unit, _ = checkObjective(s.cfg.Objective)
	return s, &Result{Measure: measure}
}

func trialOf(n int, target float64, obj float64) *record.TuneTrial {
	return &record.TuneTrial{N: n, Settings: tune.Settings{"eviction_dirty_target": target}, Objective: pf(obj), Status: record.StatusOK}
}

// TestUnconfirmedVerdicts: the verdicts of a search that runs no
// confirmation, and that one with a trial better than the baseline runs
// it.
func TestUnconfirmedVerdicts(t *testing.T) {
	base := trialOf(0, 5, 10)
	for _, c := range []struct {
		name    string
		measure string
		confirm int
		trials  []*record.TuneTrial
		best    *record.TuneTrial
		want    string // "" : a confirmation runs
	}{
		{"nothing measured", "p99", 3, []*record.TuneTrial{base}, nil, "no setting was measured: no verdict"},
		{"the baseline is best", "p99", 3, []*record.TuneTrial{base, trialOf(1, 2, 12), trialOf(2, 8, 11)}, base,
			"no setting beat the baseline beyond noise: none of 2 trials measured a better p99 than the baseline's 10.0 ms"},
		{"a trial no better", "p99", 3, []*record.TuneTrial{base, trialOf(1, 2, 10)}, trialOf(1, 2, 10),
			"no setting beat the baseline beyond noise: none of 1 trials measured a better p99 than the baseline's 10.0 ms"},
		{"confirm = 0", "p99", 0, []*record.TuneTrial{base, trialOf(1, 3, 8)}, trialOf(1, 3, 8),
			"best setting eviction_dirty_target=3 measured 20.0% better in p99 than the baseline in one trial (not confirmed: confirm = 0)"},
		{"confirm = 0, maximising", "ops/s", 0, []*record.TuneTrial{base, trialOf(1, 3, 12.5)}, trialOf(1, 3, 12.5),
			"best setting eviction_dirty_target=3 measured 25.0% better in ops/s than the baseline in one trial"},
		{"a better trial is confirmed", "p99", 3, []*record.TuneTrial{base, trialOf(1, 3, 8)}, trialOf(1, 3, 8), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, res := verdictSearch(t, c.measure, c.confirm)
			for _, tr := range c.trials {
				res.Trials = append(res.Trials, *tr)
			}
			got, done := s.unconfirmed(res, c.best)
			if done != (c.want != "") || !strings.HasPrefix(got, c.want) {
				t.Errorf("verdict %q (done %t), want %q", got, done, c.want)
			}
		})
	}
}

// TestConfirmedVerdicts: the verdict of the confirmation words compare's
// row (baseline A, best B): the improvement in the objective's direction,
// the test's evidence, and "no setting beat the baseline" when the
// difference is not one or is too small; KeepBest keeps only the first.
func TestConfirmedVerdicts(t *testing.T) {
	for _, c := range []struct {
		name     string
		measure  string
		row      compare.MeasureRow
		want     string
		improve  *float64
		keepable bool
	}{
		{"better in p99", "p99", compare.MeasureRow{ChangePct: pf(-20), Judgement: compare.Judgement{NA: 9, NB: 9, P: pf(0.0021), Verdict: compare.Faster}},
			"best setting eviction_dirty_target=3 is 20.0% better in p99 than the baseline (Mann-Whitney p = 0.0021, 9/9 values)", pf(20), true},
		{"better in ops/s", "ops/s", compare.MeasureRow{ChangePct: pf(12), Judgement: compare.Judgement{NA: 6, NB: 6, P: pf(0.01), Verdict: compare.Faster}},
			"best setting eviction_dirty_target=3 is 12.0% better in ops/s than the baseline (Mann-Whitney p = 0.01, 6/6 values)", pf(12), true},
		{"too small", "p99", compare.MeasureRow{ChangePct: pf(-3), Small: true, Judgement: compare.Judgement{NA: 9, NB: 9, P: pf(0.001), Verdict: compare.NoDifference}},
			"no setting beat the baseline beyond noise: the best setting eviction_dirty_target=3 differs by 3.0% in p99, below the 5% compare calls a difference (Mann-Whitney p = 0.001, 9/9 values)", pf(3), false},
		{"no difference", "p99", compare.MeasureRow{ChangePct: pf(23), Judgement: compare.Judgement{NA: 3, NB: 3, P: pf(1), Verdict: compare.NoDifference}},
			"no setting beat the baseline beyond noise: the best setting eviction_dirty_target=3 changed p99 by +23.0% in the confirmation (Mann-Whitney p = 1, 3/3 values: no difference)", pf(-23), false},
		{"worse, by a bootstrap", "p99", compare.MeasureRow{ChangePct: pf(40), Judgement: compare.Judgement{NA: 3, NB: 3, CI: &[2]float64{0.1, 0.7}, Verdict: compare.Slower}},
			"no setting beat the baseline beyond noise: the best setting eviction_dirty_target=3 changed p99 by +40.0% in the confirmation (bootstrap interval [+10.0%, +70.0%]: slower)", pf(-40), false},
		{"nothing to compare", "p99", compare.MeasureRow{Judgement: compare.Judgement{Verdict: compare.NoDifference, Test: "fewer than 3 values"}},
			"no setting beat the baseline beyond noise: the best setting eviction_dirty_target=3 changed p99 by – in the confirmation (fewer than 3 values: no difference)", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, res := verdictSearch(t, c.measure, 3)
			s.confirmed(res, tune.Settings{"eviction_dirty_target": 3}, c.row)
			if res.Verdict != c.want {
				t.Errorf("verdict\n got %q\nwant %q", res.Verdict, c.want)
			}
			switch {
			case c.improve == nil && res.ImprovementPct != nil, c.improve != nil && (res.ImprovementPct == nil || *res.ImprovementPct != *c.improve):
				t.Errorf("improvement %v, want %v", res.ImprovementPct, c.improve)
			}
			if res.P != c.row.P {
				t.Errorf("p %v, want the row's %v", res.P, c.row.P)
			}
			res.Best = tune.Settings{"eviction_dirty_target": 3}
			if got := res.ImprovementPct != nil && s.confirmedBetter(res); got != c.keepable {
				t.Errorf("confirmed better %t, want %t", got, c.keepable)
			}
		})
	}
}
