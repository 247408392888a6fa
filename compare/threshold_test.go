package compare

import (
	"context"
	"strings"
	"testing"

	"wtd/engine/record"
	"wtd/engine/store"
)

func fptr(v float64) *float64 { return &v }

// thresholdsOf checks ths against planted run id of st.
func thresholdsOf(t *testing.T, st *store.Store, id int64, ths ...record.Threshold) []store.Threshold {
	t.Helper()
	ctx := context.Background()
	rec, err := record.LoadSteps(ctx, st, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ths {
		if err := CheckThreshold(th); err != nil {
			t.Fatalf("CheckThreshold(%+v): %v", th, err)
		}
	}
	res, err := Thresholds(ctx, st, rec.Run, rec.Steps, ths)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(ths) {
		t.Fatalf("%d outcomes for %d thresholds", len(res), len(ths))
	}
	return res
}

// Each kind of threshold holds or fails on planted figures: the baseline
// run's reads have a p99 of 0.8 ms and 10000 ops/s (median over three
// rounds), the slower run's 1.6 ms and 5000 ops/s.
func TestThresholdsOnPlantedRuns(t *testing.T) {
	st := newStore(t)
	first := nightly(roundSteps(3, 1)).record(t, st)
	slower := nightly(roundSteps(3, 2)).record(t, st)
	cases := []struct {
		th           record.Threshold
		onBase, onSl string // state on the baseline run and on the slower one
		unit         string
		reason       string // in the slower run's reason
		value        float64
		limit        *float64
	}{
		{record.Threshold{Step: "reads", Measure: "p99", Max: fptr(1)}, store.ThresholdPassed, store.ThresholdFailed,
			"p99 ms", `p99 ms of "reads" 1.6 > max 1`, 1.6, fptr(1)},
		{record.Threshold{Step: "reads", Measure: "ops/s", Min: fptr(6000)}, store.ThresholdPassed, store.ThresholdFailed,
			"ops/s", `ops/s of "reads" 5000 < min 6000`, 5000, fptr(6000)},
		{record.Threshold{Step: "reads", Measure: "p50", Max: fptr(0.7)}, store.ThresholdPassed, store.ThresholdPassed,
			"p50 ms", `p50 ms of "reads" 0.6 <= max 0.7`, 0.6, fptr(0.7)},
		{record.Threshold{Step: "reads", Measure: "p99 ms", VsBaseline: "+10%"}, store.ThresholdNoBaseline, store.ThresholdFailed,
			"p99 ms", `p99 ms of "reads" 1.6 is more than 10% above run 1's 0.8 (0.88)`, 1.6, fptr(0.88)},
		{record.Threshold{Step: "reads", Measure: "p99", VsBaseline: "+150%"}, store.ThresholdNoBaseline, store.ThresholdPassed,
			"p99 ms", `p99 ms of "reads" 1.6 is within 150% above run 1's 0.8 (2)`, 1.6, fptr(2)},
		{record.Threshold{Step: "reads", Measure: "ops/s", VsBaseline: "-10%"}, store.ThresholdNoBaseline, store.ThresholdFailed,
			"ops/s", `ops/s of "reads" 5000 is more than 10% below run 1's 1e+04 (9000)`, 5000, fptr(9000)},
		{record.Threshold{Step: "load", Measure: "p99", Max: fptr(12)}, store.ThresholdPassed, store.ThresholdPassed,
			"batch p99 ms", `batch p99 ms of "load" 10 <= max 12`, 10, fptr(12)},
		{record.Threshold{Step: "app-evict", Measure: "app-evict", Max: fptr(1)}, store.ThresholdFailed, store.ThresholdFailed,
			"app evict ms", `no step named "app-evict" ran`, -1, fptr(1)},
	}
	var ths []record.Threshold
	for _, c := range cases {
		ths = append(ths, c.th)
	}
	base := thresholdsOf(t, st, first, ths...)
	sl := thresholdsOf(t, st, slower, ths...)
	for i, c := range cases {
		if base[i].State != c.onBase {
			t.Errorf("%+v on the baseline run: %s (%s), want %s", c.th, base[i].State, base[i].Reason, c.onBase)
		}
		got := sl[i]
		if got.State != c.onSl || !strings.Contains(got.Reason, c.reason) || got.Unit != c.unit {
			t.Errorf("%+v on the slower run: %s %q (%s), want %s %q (%s)", c.th, got.State, got.Reason, got.Unit, c.onSl, c.reason, c.unit)
		}
		switch {
		case c.value < 0 && got.Value != nil:
			t.Errorf("%+v: value %v, want none (not measured)", c.th, *got.Value)
		case c.value >= 0 && (got.Value == nil || !near(*got.Value, c.value, 1e-3*c.value+1e-9)):
			t.Errorf("%+v: value %v, want %g", c.th, got.Value, c.value)
		}
		if (got.Limit == nil) != (c.limit == nil) || (c.limit != nil && !near(*got.Limit, *c.limit, 1e-3**c.limit)) {
			t.Errorf("%+v: limit %v, want %v", c.th, got.Limit, c.limit)
		}
		if c.th.VsBaseline != "" && (got.BaselineRun == nil || *got.BaselineRun != first) {
			t.Errorf("%+v: baseline run %v, want %d", c.th, got.BaselineRun, first)
		}
	}
	msg := FailedThresholds(sl)
	if !strings.HasPrefix(msg, "5 thresholds failed: ") || !strings.Contains(msg, `p99 ms of "reads" 1.6 > max 1; `) {
		t.Errorf("FailedThresholds = %q", msg)
	}
	if msg := FailedThresholds(base[:3]); msg != "" {
		t.Errorf("FailedThresholds of held thresholds = %q, want none", msg)
	}
}

// A step that failed in every round has nothing measured: its threshold
// fails, saying so, instead of passing on a missing value.
func TestThresholdOfAFailedStepFails(t *testing.T) {
	st := newStore(t)
	steps := roundSteps(2, 1)
	for i := range steps {
		if steps[i].name == "reads" {
			steps[i].status = store.StatusFailed
		}
	}
	id := nightly(steps).record(t, st)
	got := thresholdsOf(t, st, id, record.Threshold{Step: "reads", Measure: "ops/s", Min: fptr(1)})[0]
	if got.State != store.ThresholdFailed || got.Value != nil || !strings.Contains(got.Reason, `step "reads" failed: ops/s not measured`) {
		t.Errorf("threshold on failed steps: %s %v %q", got.State, got.Value, got.Reason)
	}
}

func TestCheckThreshold(t *testing.T) {
	bad := []struct {
		th   record.Threshold
		want string
	}{
		{record.Threshold{Measure: "p99", Max: fptr(5)}, "step is missing"},
		{record.Threshold{Step: "r", Measure: "p98", Max: fptr(5)}, `unknown measure "p98": want one of ops/s, p50, p99`},
		{record.Threshold{Step: "r", Measure: "p99"}, "give one of max, min and vs_baseline (0 given)"},
		{record.Threshold{Step: "r", Measure: "p99", Max: fptr(5), Min: fptr(1)}, "(2 given)"},
		{record.Threshold{Step: "r", Measure: "p99", VsBaseline: "10%"}, `vs_baseline "10%": want a signed percentage`},
		{record.Threshold{Step: "r", Measure: "p99", VsBaseline: "+10"}, `vs_baseline "+10": want a signed percentage`},
		{record.Threshold{Step: "r", Measure: "ops/s", VsBaseline: "-100%"}, "want less than 100%"},
	}
	for _, c := range bad {
		err := CheckThreshold(c.th)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckThreshold(%+v) = %v, want %q", c.th, err, c.want)
		}
	}
	for _, ok := range []record.Threshold{
		{Step: "r", Measure: "p99", Max: fptr(5)},
		{Step: "r", Measure: "ops/s", VsBaseline: "-5.5%"},
		{Step: "r", Measure: "app-evict", VsBaseline: "+0%"},
	} {
		if err := CheckThreshold(ok); err != nil {
			t.Errorf("CheckThreshold(%+v) = %v", ok, err)
		}
	}
}

// Values print as wtd compare and the report show them, never in
// exponent form for the sizes measures have.
func TestFormatValue(t *testing.T) {
	v := func(f float64) *float64 { return &f }
	for _, c := range []struct {
		v    *float64
		want string
	}{{nil, "–"}, {v(108512), "108512"}, {v(1.085e5), "108500"}, {v(12.345), "12.3"}, {v(0.5), "0.500"}, {v(0.00123), "0.00123"}, {v(0), "0"}} {
		if got := FormatValue(c.v); got != c.want {
			t.Errorf("FormatValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
