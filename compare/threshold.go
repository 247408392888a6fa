package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"wtd/engine/record"
	"wtd/engine/store"
)

var vsBaselineForm = regexp.MustCompile(`^([+-])([0-9]+(?:\.[0-9]+)?)%$`)

// parseVsBaseline reads "+10%" as 0.10 and "-5%" as -0.05.
func parseVsBaseline(s string) (float64, error) {
	m := vsBaselineForm.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("vs_baseline %q: want a signed percentage such as \"+10%%\" (at most 10%% above the baseline) or \"-5%%\" (at most 5%% below)", s)
	}
	v, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return 0, fmt.Errorf("vs_baseline %q: %w", s, err)
	}
	if m[1] == "-" {
		if v >= 100 {
			return 0, fmt.Errorf("vs_baseline %q: a fall of 100%% or more allows anything: want less than 100%%", s)
		}
		v = -v
	}
	return v / 100, nil
}

// CheckThreshold returns an error naming what is wrong with t: no step, a
// measure compare does not know, not exactly one of max, min and
// vs_baseline.
func CheckThreshold(t record.Threshold) error {
	if strings.TrimSpace(t.Step) == "" {
		return errors.New("step is missing: name the step (or steps, over rounds) whose measure is held")
	}
	if _, err := measureNamed(t.Measure); err != nil {
		return err
	}
	n := 0
	for _, given := range []bool{t.Max != nil, t.Min != nil, t.VsBaseline != ""} {
		if given {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("give one of max, min and vs_baseline (%d given)", n)
	}
	if t.VsBaseline != "" {
		if _, err := parseVsBaseline(t.VsBaseline); err != nil {
			return err
		}
	}
	return nil
}

// stepValue is the value of m over the ok steps named name (the median
// over rounds), in m's unit, and the unit's name; nil with the reason when
// it was not measured.
func stepValue(steps []record.StepRecord, name string, m measure) (*float64, string, string) {
	var vals []float64
	ran, failed, load := 0, 0, false
	for _, st := range steps {
		if st.Name != name {
			continue
		}
		ran++
		if st.Status != record.StatusOK {
			failed++
			continue
		}
		ms := record.MeasuresOf(st)
		load = load || ms.Load
		if v := m.value(ms); v != nil {
			vals = append(vals, *v*m.scale)
		}
	}
	unit := m.name
	if load && m.loadName != "" {
		unit = m.loadName
	}
	switch {
	case ran == 0:
		return nil, unit, fmt.Sprintf("no step named %q ran", name)
	case len(vals) == 0 && failed > 0:
		return nil, unit, fmt.Sprintf("step %q failed: %s not measured", name, unit)
	case len(vals) == 0:
		return nil, unit, fmt.Sprintf("step %q has no %s: not measured", name, unit)
	}
	med := Median(vals)
	return &med, unit, ""
}

// figure formats a value for a reason.
func figure(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// Thresholds checks the thresholds ths of run (whose steps are steps) and
// returns each one's outcome, in order. A vs_baseline threshold reads the
// baseline, the previous ok run of the same playbook with the same
// parameters (store.PreviousOK), from st; without one it is not checked
// (state "no baseline"). A value that was not measured fails its
// threshold: a gate that could not be checked does not pass.
func Thresholds(ctx context.Context, st *store.Store, run store.Run, steps []record.StepRecord, ths []record.Threshold) ([]store.Threshold, error) {
	out := make([]store.Threshold, 0, len(ths))
	var base *store.Run
	var baseSteps []record.StepRecord
	for i, t := range ths {
		spec, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		r := store.Threshold{Seq: i + 1, Spec: spec}
		m, err := measureNamed(t.Measure)
		if err != nil {
			return nil, err
		}
		var why string
		r.Value, r.Unit, why = stepValue(steps, t.Step, m)
		what := fmt.Sprintf("%s of %q", r.Unit, t.Step)
		switch {
		case t.VsBaseline != "":
			pct, err := parseVsBaseline(t.VsBaseline)
			if err != nil {
				return nil, err
			}
			if base == nil {
				b, err := st.PreviousOK(ctx, run)
				if errors.Is(err, store.ErrNotFound) {
					b = store.Run{}
				} else if err != nil {
					return nil, err
				}
				base = &b
				if b.ID != 0 {
					rec, err := record.LoadSteps(ctx, st, b.ID)
					if err != nil {
						return nil, err
					}
					baseSteps = rec.Steps
				}
			}
			if base.ID == 0 {
				r.State, r.Reason = store.ThresholdNoBaseline, fmt.Sprintf("%s vs_baseline %s: no earlier ok run of the playbook with the same parameters", what, t.VsBaseline)
				break
			}
			id := base.ID
			r.BaselineRun = &id
			var bwhy string
			r.Baseline, _, bwhy = stepValue(baseSteps, t.Step, m)
			if r.Baseline == nil {
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s vs_baseline %s: in baseline run %d, %s", what, t.VsBaseline, id, bwhy)
				break
			}
			lim := *r.Baseline * (1 + pct)
			r.Limit = &lim
			dir := "above"
			if pct < 0 {
				dir = "below"
			}
			bound := fmt.Sprintf("%s %s run %d's %s (%s)", strings.TrimLeft(t.VsBaseline, "+-"), dir, id, figure(*r.Baseline), figure(lim))
			switch {
			case r.Value == nil:
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s vs_baseline %s: %s", what, t.VsBaseline, why)
			case pct >= 0 && *r.Value > lim:
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s %s is more than %s", what, figure(*r.Value), bound)
			case pct < 0 && *r.Value < lim:
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s %s is more than %s", what, figure(*r.Value), bound)
			default:
				r.State, r.Reason = store.ThresholdPassed, fmt.Sprintf("%s %s is within %s", what, figure(*r.Value), bound)
			}
		default:
			lim, op, bad := 0.0, "", false
			if t.Max != nil {
				lim, op = *t.Max, "max"
			} else {
				lim, op = *t.Min, "min"
			}
			r.Limit = &lim
			if r.Value != nil {
				bad = (op == "max" && *r.Value > lim) || (op == "min" && *r.Value < lim)
			}
			switch {
			case r.Value == nil:
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s %s %s: %s", what, op, figure(lim), why)
			case bad && op == "max":
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s %s > max %s", what, figure(*r.Value), figure(lim))
			case bad:
				r.State, r.Reason = store.ThresholdFailed, fmt.Sprintf("%s %s < min %s", what, figure(*r.Value), figure(lim))
			case op == "max":
				r.State, r.Reason = store.ThresholdPassed, fmt.Sprintf("%s %s <= max %s", what, figure(*r.Value), figure(lim))
			default:
				r.State, r.Reason = store.ThresholdPassed, fmt.Sprintf("%s %s >= min %s", what, figure(*r.Value), figure(lim))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// FailedThresholds joins the reasons of the thresholds that failed, for a
// run's reason ("" when none did).
func FailedThresholds(ths []store.Threshold) string {
	var bad []string
	for _, t := range ths {
		if t.State == store.ThresholdFailed {
			bad = append(bad, t.Reason)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	word := "threshold"
	if len(bad) > 1 {
		word = "thresholds"
	}
	return fmt.Sprintf("%d %s failed: %s", len(bad), word, strings.Join(bad, "; "))
}
