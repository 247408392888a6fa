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
	// Result is the whole comparison (nil without a baseline).
	Result *Result `json:"-"`
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
	v.Baseline, v.Result, v.Reasons = res.A.ID, res, res.Reasons
	if !res.Comparable {
		v.Verdict = NotComparable
		return v, nil
	}
	for _, s := range res.Steps {
		switch s.Verdict {
		case Slower:
			v.Slower = append(v.Slower, s.Step)
		case Faster:
			v.Faster = append(v.Faster, s.Step)
		}
	}
	switch {
	case len(v.Slower) > 0:
		v.Verdict = Slower
	case len(v.Faster) > 0:
		v.Verdict = Faster
	default:
		v.Verdict = NoDifference
	}
	return v, nil
}
