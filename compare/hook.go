package compare

import (
	"context"
	"errors"

	"wtd/engine/store"
)

// Run verdicts, one word for a repeated run against its baseline.
const (
	VerdictNoBaseline = "no baseline"
)

// RunVerdict is the regression verdict of a run against its baseline (the
// previous ok run of the same playbook with the same parameters): slower
// when any matched step is slower in ops/s, else faster when any is
// faster, else no difference; not comparable when the runs differ in
// playbook text, servers or host; no baseline for the first such run.
type RunVerdict struct {
	Run      int64    `json:"run"`
	Baseline int64    `json:"baseline,omitempty"`
	Verdict  string   `json:"verdict"`
	Slower   []string `json:"slower,omitempty"` // the steps behind the verdict
	Faster   []string `json:"faster,omitempty"`
	Reasons  []string `json:"reasons,omitempty"` // why not comparable
	// Steps are the steps behind the verdict (slower or faster in ops/s)
	// with their figures.
	Steps []VerdictStep `json:"steps,omitempty"`
	Alpha float64       `json:"alpha,omitempty"` // the comparison's level and test
	Test  string        `json:"test,omitempty"`
	// History are the earlier runs a verdict in the run's history
	// (VerdictInHistory) weighed it against, newest first; the steps' A
	// is then their median.
	History []int64 `json:"history,omitempty"`
	// Method says how the verdict was reached, in words.
	Method string `json:"method,omitempty"`
	// HostBusy says that the host was busy with other work during a step
	// behind the verdict: the verdict is then not reliable.
	HostBusy []string `json:"host_busy,omitempty"`
	// Result is the whole comparison (nil without a baseline).
	Result *Result `json:"-"`
}

// VerdictStep is a matched step that is slower or faster in ops/s (or, for
// a load, docs/s): its value in the baseline (a) and in the run (b), the
// change in percent and the test's evidence.
type VerdictStep struct {
	Step      string      `json:"step"`
	Verdict   string      `json:"verdict"`
	Measure   string      `json:"measure"`
	A         *float64    `json:"a"`
	B         *float64    `json:"b"`
	ChangePct *float64    `json:"change_pct"`
	P         *float64    `json:"p,omitempty"`
	CI        *[2]float64 `json:"change_interval,omitempty"`
}

// VerdictOf judges run id against its baseline. It is what a scheduler
// calls when a repeated run ends, to record and show its verdict.
func VerdictOf(ctx context.Context, st *store.Store, id int64, opt Options) (RunVerdict, error) {
	v := RunVerdict{Run: id}
	res, err := Baseline(ctx, st, id, opt)
	if errors.Is(err, store.ErrNotFound) {
		if _, gerr := st.GetRun(ctx, id); gerr != nil {
			return v, gerr
		}
		v.Verdict = VerdictNoBaseline
		return v, nil
	}
	if err != nil {
		return v, err
	}
	v.Baseline, v.Result, v.Reasons, v.Alpha, v.Test = res.A.ID, res, res.Reasons, res.Alpha, res.Test
	if !res.Comparable {
		v.Verdict = NotComparable
		return v, nil
	}
	v.Slower, v.Faster = res.SlowerFaster()
	for _, s := range res.Steps {
		if s.Verdict != Slower && s.Verdict != Faster {
			continue
		}
		vs := VerdictStep{Step: s.Step, Verdict: s.Verdict}
		for _, m := range s.Measures {
			if m.Measure == measures[0].name || m.Measure == measures[0].loadName {
				vs.Measure, vs.A, vs.B, vs.ChangePct, vs.P, vs.CI = m.Measure, m.A, m.B, m.ChangePct, m.P, m.CI
				break
			}
		}
		v.Steps = append(v.Steps, vs)
	}
	v.Verdict = v.word()
	return v, nil
}

// word is the run's verdict from its steps': slower when any step is,
// else faster when any is, else no difference.
func (v RunVerdict) word() string {
	switch {
	case len(v.Slower) > 0:
		return Slower
	case len(v.Faster) > 0:
		return Faster
	}
	return NoDifference
}
