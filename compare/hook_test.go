package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/engine/workload"
)

// recordRun records a run of one reads step whose per-second throughput
// is level with 3% noise, for 20 seconds.
func recordRun(t *testing.T, st *store.Store, rng *rand.Rand, level float64, params map[string]any) int64 {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "playbooks/nightly.lua", Playbook: "-- nightly", Params: params, StartedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	sid, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: "reads", StartedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	var series []workload.SecondPoint
	for s := range 21 {
		n := int64(level * (1 + 0.03*rng.NormFloat64()))
		series = append(series, workload.SecondPoint{Second: s, Counts: map[string]int64{"read": n}, P99Micros: map[string]float64{"read": 300}})
	}
	b, _ := json.Marshal(map[string]any{"result": map[string]any{"total": map[string]any{"count": 20 * level, "ops_per_sec": level, "p99_micros": 300.0}, "series": series}})
	if err := st.FinishStep(ctx, sid, store.StepResult{Status: store.StatusOK, Results: b}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestVerdictOf(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	rng := rand.New(rand.NewPCG(3, 3))
	p := map[string]any{"n": 1.0}
	first := recordRun(t, st, rng, 10000, p)
	same := recordRun(t, st, rng, 10000, p)
	other := recordRun(t, st, rng, 5000, map[string]any{"n": 2.0}) // other parameters: not a baseline
	slow := recordRun(t, st, rng, 8500, p)
	for _, c := range []struct {
		id       int64
		verdict  string
		baseline int64
	}{{first, VerdictNoBaseline, 0}, {same, NoDifference, first}, {other, VerdictNoBaseline, 0}, {slow, Slower, same}} {
		v, err := VerdictOf(ctx, st, c.id, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != c.verdict || v.Baseline != c.baseline || c.verdict == Slower && (len(v.Slower) != 1 || v.Slower[0] != "reads" ||
			len(v.Steps) != 1 || v.Steps[0].Step != "reads" || v.Steps[0].Measure != "ops/s" || v.Steps[0].ChangePct == nil || *v.Steps[0].ChangePct > -5 || v.Steps[0].P == nil) {
			t.Errorf("run %d: %+v, want %s against %d", c.id, v, c.verdict, c.baseline)
		}
	}
	if _, err := VerdictOf(ctx, st, 99, Options{}); err == nil {
		t.Error("no error for an unknown run")
	}
}

// TestVerdictOfSlowerWins: a run with one step twice as slow and another
// twice as fast as its baseline is slower, naming each step on its side
// with its figures; the same steps only faster make it faster.
func TestVerdictOfSlowerWins(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	step := func(name string, slowdown float64) plantedStep {
		return plantedStep{name: name, result: readsResult(plantedSeconds, readOps/slowdown, readP50*slowdown, readP99*slowdown, 0, 0, 0)}
	}
	base := nightly([]plantedStep{step("point reads", 1), step("scans", 1)}).record(t, st)
	mixed := nightly([]plantedStep{step("point reads", 0.5), step("scans", 2)}).record(t, st)
	faster := nightly([]plantedStep{step("point reads", 0.5), step("scans", 0.5)}).record(t, st)
	for _, c := range []struct {
		run, baseline  int64
		verdict        string
		slower, faster string
	}{
		{mixed, base, Slower, "[scans]", "[point reads]"},
		{faster, mixed, Faster, "[]", "[scans]"},
	} {
		v, err := VerdictOf(ctx, st, c.run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Verdict != c.verdict || v.Baseline != c.baseline || fmt.Sprint(v.Slower) != c.slower || fmt.Sprint(v.Faster) != c.faster {
			t.Errorf("run %d: %s against %d, slower %v, faster %v; want %s against %d, slower %s, faster %s",
				c.run, v.Verdict, v.Baseline, v.Slower, v.Faster, c.verdict, c.baseline, c.slower, c.faster)
		}
		for _, s := range v.Steps {
			want := Faster
			if strings.Contains(c.slower, s.Step) {
				want = Slower
			}
			if s.Verdict != want || s.Measure != "ops/s" || s.ChangePct == nil || (want == Slower) != (*s.ChangePct < 0) {
				t.Errorf("run %d, step %s: %s, %s change %v; want %s", c.run, s.Step, s.Verdict, s.Measure, s.ChangePct, want)
			}
		}
		if len(v.Steps) != len(v.Slower)+len(v.Faster) {
			t.Errorf("run %d: %d steps behind the verdict, want %d", c.run, len(v.Steps), len(v.Slower)+len(v.Faster))
		}
	}
}
