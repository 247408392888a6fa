package compare

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestVerdictInHistory: a nightly run is judged against the spread of the
// runs before it, not against its neighbour alone.
func TestVerdictInHistory(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	rng := rand.New(rand.NewPCG(5, 5))
	p := map[string]any{"n": 1.0}
	var ids []int64
	for _, level := range []float64{10000, 10300, 9800, 10100} {
		ids = append(ids, recordRun(t, st, rng, level, p))
	}
	other := recordRun(t, st, rng, 5000, map[string]any{"n": 2.0}) // other parameters: never in the history
	within := recordRun(t, st, rng, 9700, p)                       // below all, but 3.5% from the median
	slow := recordRun(t, st, rng, 9000, p)                         // 10% below, 4.7 robust deviations
	fast := recordRun(t, st, rng, 11500, p)

	for _, c := range []struct {
		run      int64
		verdict  string
		history  int
		baseline int64
		method   string
	}{
		{ids[0], VerdictNoBaseline, 0, 0, ""},
		{ids[1], NoDifference, 0, ids[0], "against the previous run: 1 earlier comparable runs (the history needs 3)"},
		{ids[3], NoDifference, 3, 0, "against the last 3 comparable runs"},
		{other, VerdictNoBaseline, 0, 0, ""},
		{within, NoDifference, 4, 0, "against the last 4 comparable runs"},
		{slow, Slower, 5, 0, "against the last 5 comparable runs"},
		{fast, Faster, 6, 0, "against the last 6 comparable runs"},
	} {
		v, err := VerdictInHistory(ctx, st, c.run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != c.verdict || len(v.History) != c.history || v.Baseline != c.baseline || !strings.HasPrefix(v.Method, c.method) {
			t.Errorf("run %d: %s, history %v, baseline %d, method %q; want %s over %d runs, baseline %d, %q",
				c.run, v.Verdict, v.History, v.Baseline, v.Method, c.verdict, c.history, c.baseline, c.method)
		}
		for _, h := range v.History {
			if h == other || h >= c.run {
				t.Errorf("run %d: history %v holds run %d", c.run, v.History, h)
			}
		}
	}
	v, err := VerdictInHistory(ctx, st, slow, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Steps) != 1 || v.Steps[0].Step != "reads" || v.Steps[0].A == nil || *v.Steps[0].A != 10000 || *v.Steps[0].B != 9000 ||
		v.Steps[0].ChangePct == nil || math.Abs(*v.Steps[0].ChangePct+10) > 1e-9 || v.Test != TestHistory {
		t.Errorf("slow run's step: %+v", v.Steps)
	}
	// The 3.5% drop is below every earlier run but 1.6 robust deviations
	// from their median: no difference even with no minimum change.
	if v, _ := VerdictInHistory(ctx, st, within, Options{MinChange: -1}); v.Verdict != NoDifference {
		t.Errorf("run %d without a minimum change: %s", within, v.Verdict)
	}
}

func TestPlaceInHistory(t *testing.T) {
	for _, c := range []struct {
		x    float64
		prev []float64
		want string
	}{
		{50, []float64{100, 100}, NoDifference},              // too few runs
		{80, []float64{100, 100, 100}, Slower},               // no spread: the change decides
		{97, []float64{100, 100, 100}, NoDifference},         // below all, under 5%
		{120, []float64{100, 101, 99, 100}, Faster},          // above all, far
		{85, []float64{100, 80, 120, 90, 110}, NoDifference}, // within the range
		{78, []float64{100, 80, 120, 90, 110}, NoDifference}, // outside, but 1.5 robust deviations
		{50, []float64{100, 80, 120, 90, 110}, Slower},       // outside and 3.4 robust deviations
	} {
		if got, _ := placeInHistory(c.x, c.prev, DefaultMinChange); got != c.want {
			t.Errorf("%v among %v: %s, want %s", c.x, c.prev, got, c.want)
		}
	}
}
