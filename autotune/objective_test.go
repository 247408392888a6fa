package autotune

import (
	"strings"
	"testing"

	"wtd/compare"
)

// TestParseLimit: a limit is an order and a number; a time measure's
// number is in ms unless it says us or s; another measure takes its own
// unit or none.
func TestParseLimit(t *testing.T) {
	for _, c := range []struct {
		measure, text string
		op            string
		value         float64
		err           string
	}{
		{"p99", "< 20ms", "<", 20, ""},
		{"p99", "<20", "<", 20, ""},
		{"p99", "<= 0.5 s", "<=", 500, ""},
		{"p50", "< 250us", "<", 0.25, ""},
		{"ops/s", ">= 5000", ">=", 5000, ""},
		{"ops/s", "> 1e3 ops/s", ">", 1000, ""},
		{"p99", "under 20", "", 0, `p99 "under 20": want an order and a number`},
		{"p99", "< 20 h", "", 0, `unit "h": want us, ms or s`},
		{"ops/s", "> 5 ms", "", 0, `unit "ms": ops/s is in ops/s`},
		{"latency", "< 1", "", 0, `unknown measure "latency"`},
	} {
		l, err := ParseLimit(c.measure, c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLimit(%s, %q) = %+v, %v; want error %q", c.measure, c.text, l, err, c.err)
			}
			continue
		}
		if err != nil || l.Op != c.op || l.Value != c.value || l.Measure != c.measure || l.String() != c.measure+" "+strings.TrimSpace(c.text) {
			t.Errorf("ParseLimit(%s, %q) = %+v (%q), %v; want %s %g", c.measure, c.text, l, l.String(), err, c.op, c.value)
		}
	}
}

func TestLimitHolds(t *testing.T) {
	for _, c := range []struct {
		op   string
		v    float64
		want bool
	}{
		{"<", 19.9, true}, {"<", 20, false}, {"<=", 20, true}, {"<=", 20.1, false},
		{">", 20.1, true}, {">", 20, false}, {">=", 20, true}, {">=", 19.9, false},
	} {
		if got := (Limit{Op: c.op, Value: 20}).holds(c.v); got != c.want {
			t.Errorf("%g %s 20 = %t, want %t", c.v, c.op, got, c.want)
		}
	}
}

// TestCheckObjective: the objective's measure says which way is better
// and in what unit; a measure neither better higher nor lower, or a limit
// on an unknown measure, is refused.
func TestCheckObjective(t *testing.T) {
	for _, c := range []struct {
		o      Objective
		better compare.Better
		unit   string
		err    string
	}{
		{Objective{Measure: "p99"}, compare.LowerIsFaster, "ms", ""},
		{Objective{Measure: "ops/s"}, compare.HigherIsFaster, "ops/s", ""},
		{Objective{Measure: "app-evict", SubjectTo: []Limit{{Measure: "p99", Op: "<", Value: 20}}}, compare.LowerIsFaster, "", ""},
		{Objective{}, 0, "", "objective: measure is required (one of "},
		{Objective{Measure: "cache-peak"}, 0, "", "cache-peak is neither better higher nor lower: tune one of "},
		{Objective{Measure: "p99", SubjectTo: []Limit{{Measure: "speed"}}}, 0, "", `objective: subject_to: `},
	} {
		better, unit, err := checkObjective(c.o)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: error %v, want %q", c.o, err, c.err)
			}
			continue
		}
		if err != nil || better != c.better || (c.unit != "" && unit != c.unit) {
			t.Errorf("%+v: %v %q %v, want %v %q", c.o, better, unit, err, c.better, c.unit)
		}
	}
	for _, m := range objectiveMeasures() {
		if b, _, _ := compare.MeasureInfo(m); b == compare.Neutral {
			t.Errorf("objective measure %s is neutral", m)
		}
	}
}
