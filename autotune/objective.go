package autotune

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"wtd/compare"
)

// Objective is what a search makes better: a measure wtd compare knows
// (one of compare.MeasureNames: "p99" and "app-evict" are made small,
// "ops/s" large), measured on each trial's step, and limits every trial
// must keep to count.
type Objective struct {
	Measure   string
	SubjectTo []Limit
}

// Limit is a bound on a measure of a trial: "p99 < 20ms". A trial that
// passes it is infeasible.
type Limit struct {
	Measure string
	Op      string  // "<", "<=", ">" or ">="
	Value   float64 // in the unit wtd compare shows the measure in (p99 in ms)
	Text    string  // as written: "< 20ms"
}

func (l Limit) String() string { return l.Measure + " " + l.Text }

// holds reports whether v keeps the limit.
func (l Limit) holds(v float64) bool {
	switch l.Op {
	case "<":
		return v < l.Value
	case "<=":
		return v <= l.Value
	case ">":
		return v > l.Value
	}
	return v >= l.Value
}

var limitForm = regexp.MustCompile(`^\s*(<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z/%]*)\s*$`)

// timeUnits are the units a limit on a time measure (shown in ms) takes.
var timeUnits = map[string]float64{"": 1, "ms": 1, "us": 1e-3, "µs": 1e-3, "s": 1e3}

// ParseLimit reads a limit on measure written as "< 20ms", "<= 0.5 s",
// "> 5000": an order, a number and, for a time measure, us, ms (the
// default) or s; for another measure its own unit or none.
func ParseLimit(measure, text string) (Limit, error) {
	_, unit, err := compare.MeasureInfo(measure)
	if err != nil {
		return Limit{}, err
	}
	m := limitForm.FindStringSubmatch(text)
	if m == nil {
		return Limit{}, fmt.Errorf("%s %q: want an order and a number such as \"< 20ms\" or \">= 5000\"", measure, text)
	}
	v, _ := strconv.ParseFloat(m[2], 64)
	u := m[3]
	switch {
	case unit == "ms":
		f, ok := timeUnits[u]
		if !ok {
			return Limit{}, fmt.Errorf("%s %q: unit %q: want us, ms or s", measure, text, u)
		}
		v *= f
	case u != "" && !strings.EqualFold(u, unit) && !strings.EqualFold(u, measure):
		return Limit{}, fmt.Errorf("%s %q: unit %q: %s is in %s", measure, text, u, measure, unit)
	}
	return Limit{Measure: measure, Op: m[1], Value: v, Text: strings.TrimSpace(text)}, nil
}

// checkObjective checks the objective's measures: known to compare, and
// the objective one better either higher or lower.
func checkObjective(o Objective) (compare.Better, string, error) {
	if o.Measure == "" {
		return 0, "", fmt.Errorf("objective: measure is required (one of %s)", strings.Join(compare.MeasureNames, ", "))
	}
	better, unit, err := compare.MeasureInfo(o.Measure)
	if err != nil {
		return 0, "", fmt.Errorf("objective: %w", err)
	}
	if better == compare.Neutral {
		return 0, "", fmt.Errorf("objective: %s is neither better higher nor lower: tune one of %s", o.Measure, strings.Join(objectiveMeasures(), ", "))
	}
	for _, l := range o.SubjectTo {
		if err := compare.CheckMeasures([]string{l.Measure}); err != nil {
			return 0, "", fmt.Errorf("objective: subject_to: %w", err)
		}
	}
	return better, unit, nil
}

// objectiveMeasures are the measures a search can make better.
func objectiveMeasures() []string {
	var out []string
	for _, n := range compare.MeasureNames {
		if b, _, err := compare.MeasureInfo(n); err == nil && b != compare.Neutral {
			out = append(out, n)
		}
	}
	return out
}
