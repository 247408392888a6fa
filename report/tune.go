package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"wtd/compare"
	"wtd/engine/record"
)

// Series styles of the charts of a tune{} search (the others draw lines).
const (
	StylePoints = "points" // a point per value, no line
	StyleStep   = "step"   // a stepped line: the best so far
)

// The colours of the series of a search's charts (of charts.js's
// palette), the same in every chart.
const (
	blue, red, green, orange, purple = "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"
)

// The labels of the series of a search's charts.
const (
	tuneObjective = "objective"
	tuneFailed    = "failed or infeasible"
	tuneBest      = "best so far"
	tuneConfBest  = "confirm: best setting"
	tuneConfBase  = "confirm: baseline"
)

// tuneCharts draws each tune{} search of the runs (record.Tunings): a
// convergence chart (each trial's objective, the best so far among the
// trials that counted, the failed and infeasible trials apart, then the
// confirmation rounds of the best setting and of the baseline) and one
// chart per knob (each trial's objective against the knob's value, the
// confirmation rounds at the best and the baseline values). A failed
// trial that measured nothing is drawn at the top of its chart.
func tuneCharts(recs []*record.Record) []Chart {
	var out []Chart
	for _, rec := range recs {
		for _, tn := range rec.Tunings() {
			if len(tn.Trials) == 0 {
				continue
			}
			id := fmt.Sprintf("tune-%d-%d", rec.Run.ID, tn.Search)
			title := fmt.Sprintf("tune search %d", tn.Search)
			if len(recs) > 1 {
				title = fmt.Sprintf("run %d, %s", rec.Run.ID, title)
			}
			out = append(out, convergenceChart(rec.Run.ID, id, title, tn))
			out = append(out, knobCharts(rec.Run.ID, id, title, tn)...)
		}
	}
	return out
}

// tuneUnit is the unit a search's objective is shown in.
func tuneUnit(measure string) string {
	if _, unit, err := compare.MeasureInfo(measure); err == nil {
		return unit
	}
	return measure
}

// splitTrials returns a search's baseline and search trials in order, and
// its confirmation rounds.
func splitTrials(tn record.Tuning) (trials, confirm []record.TuneTrial) {
	for _, tr := range tn.Trials {
		if tr.Phase == "confirm" {
			confirm = append(confirm, tr)
		} else {
			trials = append(trials, tr)
		}
	}
	return trials, confirm
}

// counts reports whether a trial counts for the best so far: measured,
// within the objective's limits and not stopped by a guard.
func counts(tr record.TuneTrial) bool {
	return tr.Status == record.StatusOK && tr.Objective != nil
}

// top is where a trial that measured nothing is drawn: the largest value
// measured in the search (NaN when nothing was).
func top(tn record.Tuning) float64 {
	v := math.NaN()
	for _, tr := range tn.Trials {
		if tr.Objective != nil && !(*tr.Objective <= v) {
			v = *tr.Objective
		}
	}
	return v
}

func objectiveOr(tr record.TuneTrial, missing float64) float64 {
	if tr.Objective == nil {
		return missing
	}
	return *tr.Objective
}

// lowerBetter reports whether the search made its measure small.
func lowerBetter(measure string) bool {
	b, _, _ := compare.MeasureInfo(measure)
	return b != compare.HigherIsFaster
}

func nans(n int) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = math.NaN()
	}
	return y
}

// convergenceChart draws a search's trials in order (0: the baseline),
// then its confirmation rounds one x apart after the last trial.
func convergenceChart(run int64, id, title string, tn record.Tuning) Chart {
	trials, confirm := splitTrials(tn)
	measure := tn.Trials[0].Measure
	lower := lowerBetter(measure)
	hi := top(tn)
	rounds := map[int]bool{}
	for _, tr := range confirm {
		rounds[tr.N] = true
	}
	n := len(trials) + len(rounds)
	rd := RunData{Run: run}
	obj, failed, best, cbest, cbase := nans(n), nans(n), nans(n), nans(n), nans(n)
	have := math.NaN()
	anyFailed := false
	for i, tr := range trials {
		rd.X = append(rd.X, float64(tr.N))
		if counts(tr) {
			obj[i] = *tr.Objective
			if v := *tr.Objective; math.IsNaN(have) || (lower && v < have) || (!lower && v > have) {
				have = v
			}
		} else {
			failed[i], anyFailed = objectiveOr(tr, hi), true
		}
		best[i] = have
	}
	last := 0.0
	if len(rd.X) > 0 {
		last = rd.X[len(rd.X)-1]
	}
	var order []int
	for r := range rounds {
		order = append(order, r)
	}
	sort.Ints(order)
	at := map[int]int{}
	for i, r := range order {
		at[r] = len(trials) + i
		rd.X = append(rd.X, last+float64(i+1))
	}
	for _, tr := range confirm {
		i := at[tr.N]
		if setting(tr) == "best" {
			cbest[i] = objectiveOr(tr, hi)
		} else {
			cbase[i] = objectiveOr(tr, hi)
		}
	}
	rd.Series = []Series{{Label: tuneObjective, Y: obj, Style: StylePoints, Colour: blue}}
	if anyFailed {
		rd.Series = append(rd.Series, Series{Label: tuneFailed, Y: failed, Style: StylePoints, Colour: red})
	}
	rd.Series = append(rd.Series, Series{Label: tuneBest, Y: best, Style: StyleStep, Colour: green})
	if len(confirm) > 0 {
		rd.Series = append(rd.Series, Series{Label: tuneConfBest, Y: cbest, Style: StylePoints, Colour: orange},
			Series{Label: tuneConfBase, Y: cbase, Style: StylePoints, Colour: purple})
	}
	note := fmt.Sprintf("%s of each trial (0: the baseline, the server's settings before the search) and the best so far among the trials that counted", measure)
	if anyFailed {
		note += "; failed and infeasible trials apart (one that measured nothing at the top)"
	}
	if len(order) > 0 {
		note += fmt.Sprintf("; after trial %d, the %d confirmation rounds of the best setting and of the baseline", int(last), len(order))
	}
	if v := tn.Verdict; v != nil {
		note += ". Verdict: " + v.Verdict
	}
	return Chart{ID: id + "-convergence", Title: title + ": " + measure + " per trial", Unit: tuneUnit(measure), Note: note,
		XLabel: "trial", XWhole: true, Runs: []RunData{rd}}
}

// setting is "best" or "baseline": which setting a confirmation round ran.
func setting(tr record.TuneTrial) string {
	if strings.HasSuffix(tr.Name, "best") {
		return "best"
	}
	return "baseline"
}

// knobCharts draws, per knob of a search, each trial's objective against
// the knob's value, sorted by it.
func knobCharts(run int64, id, title string, tn record.Tuning) []Chart {
	trials, confirm := splitTrials(tn)
	measure := tn.Trials[0].Measure
	hi := top(tn)
	var knobs []string
	seen := map[string]bool{}
	for _, tr := range tn.Trials {
		for k := range tr.Settings {
			if !seen[k] {
				seen[k] = true
				knobs = append(knobs, k)
			}
		}
	}
	sort.Strings(knobs)
	var out []Chart
	for _, k := range knobs {
		type point struct {
			x     float64
			which int // the series
			y     float64
		}
		var pts []point
		for _, tr := range trials {
			x, ok := tr.Settings[k]
			if !ok {
				continue
			}
			if counts(tr) {
				pts = append(pts, point{x, 0, *tr.Objective})
			} else {
				pts = append(pts, point{x, 1, objectiveOr(tr, hi)})
			}
		}
		for _, tr := range confirm {
			x, ok := tr.Settings[k]
			if !ok {
				continue
			}
			which := 2
			if setting(tr) == "baseline" {
				which = 3
			}
			pts = append(pts, point{x, which, objectiveOr(tr, hi)})
		}
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		labels := []string{tuneObjective, tuneFailed, tuneConfBest, tuneConfBase}
		colours := []string{blue, red, orange, purple}
		ys := make([][]float64, len(labels))
		for i := range ys {
			ys[i] = nans(len(pts))
		}
		has := make([]bool, len(labels))
		rd := RunData{Run: run}
		for i, p := range pts {
			rd.X = append(rd.X, p.x)
			ys[p.which][i], has[p.which] = p.y, true
		}
		for i, l := range labels {
			if has[i] || i == 0 {
				rd.Series = append(rd.Series, Series{Label: l, Y: ys[i], Style: StylePoints, Colour: colours[i]})
			}
		}
		note := fmt.Sprintf("%s of each trial against the value of %s it ran with", measure, k)
		if has[2] || has[3] {
			note += "; the confirmation rounds at the best setting's and the baseline's values"
		}
		out = append(out, Chart{ID: id + "-knob-" + chartID(k), Title: title + ": " + measure + " against " + k, Unit: tuneUnit(measure),
			Note: note, XLabel: k, Runs: []RunData{rd}})
	}
	return out
}

// chartID makes a knob's name fit an element id.
func chartID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
}
