package compare

import (
	"fmt"
	"slices"
	"strings"

	"wtd/engine/record"
)

// Across is a label left out when the steps of two runs were matched, with
// its values in each run and the parameter of the runs that gave them
// ("" when none did).
type Across struct {
	Label     string   `json:"label"`
	A         []string `json:"a"`
	B         []string `json:"b"`
	Parameter string   `json:"parameter,omitempty"`
}

// acrossLabels are the labels matching leaves out: those named, and those
// whose values in each run are values of a parameter the runs differ in,
// with no value in common (`-p sizes=0.25` and `-p sizes=1`, steps
// labelled cacheSizeGB=0.25 and cacheSizeGB=1). A parameter whose values
// such a label carries is no reason the runs are not comparable.
func acrossLabels(a, b *record.Record, named []string) []Across {
	la, lb := labelValues(a.Steps), labelValues(b.Steps)
	var names []string
	for l := range la {
		if _, ok := lb[l]; ok && l != "round" {
			names = append(names, l)
		}
	}
	slices.Sort(names)
	var out []Across
	for _, l := range names {
		va, vb := la[l], lb[l]
		param := ""
		for _, k := range sortedParamKeys(a.Run.Params) {
			pa, okA := a.Run.Params[k]
			pb, okB := b.Run.Params[k]
			if okA && okB && subset(va, paramValues(pa)) && subset(vb, paramValues(pb)) && !slices.Equal(paramValues(pa), paramValues(pb)) {
				param = k
				break
			}
		}
		explicit := slices.Contains(named, l)
		if explicit || (param != "" && disjoint(va, vb)) {
			out = append(out, Across{Label: l, A: va, B: vb, Parameter: param})
		}
	}
	for _, l := range named {
		if !slices.ContainsFunc(out, func(x Across) bool { return x.Label == l }) {
			out = append(out, Across{Label: l, A: la[l], B: lb[l]})
		}
	}
	return out
}

// labelValues are the values each label takes in steps, in order of
// first appearance.
func labelValues(steps []record.StepRecord) map[string][]string {
	out := map[string][]string{}
	for _, st := range steps {
		for k, v := range st.Labels {
			s := fmt.Sprint(v)
			if !slices.Contains(out[k], s) {
				out[k] = append(out[k], s)
			}
		}
	}
	return out
}

// paramValues are a parameter's values as labels would show them: the
// items of a list, one by one.
func paramValues(v any) []string {
	var out []string
	for _, s := range strings.Split(record.ParamValue(v), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func sortedParamKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func subset(xs, of []string) bool {
	if len(xs) == 0 {
		return false
	}
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

func disjoint(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// AcrossText words the labels a comparison left out:
// `cacheSizeGB 0.25 (run 4) and 1 (run 5), from parameter sizes`.
func (r *Result) AcrossText() []string {
	var out []string
	for _, x := range r.Across {
		s := fmt.Sprintf("%s %s (run %d) and %s (run %d)", x.Label, orDashList(x.A), r.A.ID, orDashList(x.B), r.B.ID)
		if x.Parameter != "" {
			s += ", from parameter " + x.Parameter
		}
		out = append(out, s)
	}
	return out
}

func orDashList(v []string) string {
	if len(v) == 0 {
		return record.Dash
	}
	return strings.Join(v, ",")
}
