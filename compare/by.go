package compare

import (
	"fmt"
	"slices"
	"strings"

	"wtd/engine/record"
)

// ByValues says what a comparison within one run compared: the steps of
// each value of Label against those of its first value, Base.
type ByValues struct {
	Label  string   `json:"label"`
	Base   string   `json:"base"`
	Values []string `json:"values"` // every value, Base first
	// Alongside are the labels whose values change with Label's and with
	// nothing else (a cacheSizeGB label beside a size label): they are
	// left out of the matching too.
	Alongside []string `json:"alongside,omitempty"`
}

// By compares, within one run, the steps of each value of a label or
// setting (record.LabelValue: cacheSizeGB, a label of the playbook's, a
// server parameter) with the steps of its first value that have the same
// name and other labels: all the rounds of a value together, with the
// tests, verdicts and rows of a comparison of runs. Row B is the other
// value; each row's Value names it.
func By(rec *record.Record, label string, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	values, alongside, err := byValues(rec, label)
	if err != nil {
		return nil, err
	}
	run := ref(rec.Run)
	res := &Result{A: run, B: run, Comparable: true, Reasons: []string{}, Alpha: opt.Alpha, MinChange: opt.MinChange,
		Test: opt.Test, Steps: []StepRow{}, OnlyInA: []string{}, OnlyInB: []string{},
		By: &ByValues{Label: label, Base: values[0], Values: values, Alongside: alongside}}
	skip := map[string]bool{label: true, "round": true}
	for _, l := range alongside {
		skip[l] = true
	}
	// Steps by the value and the key they are matched on.
	groups := map[string]map[string][]record.StepRecord{}
	var order []string // keys, as the base value's steps give them
	seen := map[string]bool{}
	for _, st := range rec.Steps {
		v := record.LabelValue(st, label)
		if v == "" {
			continue
		}
		k := keyWithout(st, skip)
		if groups[v] == nil {
			groups[v] = map[string][]record.StepRecord{}
		}
		groups[v][k] = append(groups[v][k], st)
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	base := groups[values[0]]
	for _, v := range values[1:] {
		for _, k := range order {
			a, b := base[k], groups[v][k]
			switch {
			case len(a) == 0 && len(b) == 0:
				continue
			case len(b) == 0:
				res.OnlyInA = append(res.OnlyInA, fmt.Sprintf("%s, %s=%s", k, label, values[0]))
				continue
			case len(a) == 0:
				res.OnlyInB = append(res.OnlyInB, fmt.Sprintf("%s, %s=%s", k, label, v))
				continue
			}
			title := fmt.Sprintf("%s, %s=%s", k, label, v)
			row := compareRow(title, without(a[0], skip), a, b, len(a) > 1 || len(b) > 1, true, res, opt)
			row.Value = v
			res.Steps = append(res.Steps, row)
		}
	}
	keepMeasures(res, opt.Measures)
	return res, nil
}

// byValues are a run's values of label in the order its steps first have
// them, and the labels that change with it alone; an error when fewer than
// two values leave nothing to compare.
func byValues(rec *record.Record, label string) (values, alongside []string, err error) {
	labels := map[string]bool{}
	for _, st := range rec.Steps {
		v := record.LabelValue(st, label)
		for k := range st.Labels {
			labels[k] = true
		}
		if v != "" && !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	switch len(values) {
	case 0:
		names := make([]string, 0, len(labels))
		for k := range labels {
			names = append(names, k)
		}
		slices.Sort(names)
		return nil, nil, fmt.Errorf("no step of run %d has a label or setting %q; its labels: %s", rec.Run.ID, label, orNone(names))
	case 1:
		return nil, nil, fmt.Errorf("every step of run %d with %s has the value %s: nothing to compare", rec.Run.ID, label, values[0])
	}
	for k := range labels {
		if k != label && k != "round" && changesWith(rec.Steps, label, k) {
			alongside = append(alongside, k)
		}
	}
	slices.Sort(alongside)
	return values, alongside, nil
}

// changesWith reports whether label other takes one value for each value
// of label by, and a different one for each: it says nothing by itself.
func changesWith(steps []record.StepRecord, by, other string) bool {
	of := map[string]string{}   // by's value -> other's
	back := map[string]string{} // other's value -> by's
	for _, st := range steps {
		v := record.LabelValue(st, by)
		o, ok := st.Labels[other]
		if v == "" || !ok {
			continue
		}
		ov := fmt.Sprint(o)
		if w, ok := of[v]; ok && w != ov {
			return false
		}
		if w, ok := back[ov]; ok && w != v {
			return false
		}
		of[v], back[ov] = ov, v
	}
	return len(of) > 1
}

// keyWithout is a step's title without the labels in skip.
func keyWithout(st record.StepRecord, skip map[string]bool) string {
	return without(st, skip).MatchTitle()
}

// without is st without the labels in skip.
func without(st record.StepRecord, skip map[string]bool) record.StepRecord {
	labels := map[string]any{}
	for k, v := range st.Labels {
		if !skip[k] {
			labels[k] = v
		}
	}
	st.Labels = labels
	return st
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func init() { record.SetByJudge(byCells) }

// byCells are the cells of a table's verdict column: "baseline" for the
// steps of by's first value, the ops/s verdict of a comparison By for the
// others ("faster +99.8% (p 0.00216)"), nothing for steps without a value
// or a match.
func byCells(steps []record.StepRecord, by string) (string, map[int]string) {
	res, err := By(&record.Record{Steps: steps}, by, Options{})
	if err != nil {
		return "", nil
	}
	cells := map[int]string{}
	for _, row := range res.Steps {
		if len(row.Measures) == 0 {
			continue
		}
		m := row.Measures[0]
		change, _, evidence := m.Cells()
		c := res.CellVerdict(row, m)
		if m.ChangePct != nil {
			c += " " + change
		}
		if m.P != nil {
			c += " (p " + evidence + ")"
		}
		for _, seq := range row.SeqA {
			cells[seq] = "baseline"
		}
		for _, seq := range row.SeqB {
			cells[seq] = c
		}
	}
	return res.By.Base, cells
}
