package compare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"testing"

	"wtd/engine/record"
	"wtd/engine/store"
)

// expect is the verdict a measure must get and the values tested on each
// side.
type expect struct {
	verdict string
	n       int
}

// mirror swaps the directions of a verdict: what run B is against A
// becomes what A is against B.
func mirror(v string) string {
	switch v {
	case Slower:
		return Faster
	case Faster:
		return Slower
	case Higher:
		return Lower
	case Lower:
		return Higher
	}
	return v
}

// directionRows are the rows of a comparison of five rounds of roundSteps
// with five rounds twice as slow, and the verdict of each measure: faster
// and slower in ops/s and docs/s, latencies, pages read per operation and
// eviction time; higher and lower in the peaks. A round alone has one
// value a side for all but the per-second series (ops/s, p99): no test.
func directionRows() (order []string, rows map[string]map[string]expect) {
	rows = map[string]map[string]expect{}
	for r := 1; r <= 5; r++ {
		load, reads := fmt.Sprintf("load (round=%d)", r), fmt.Sprintf("reads (round=%d)", r)
		order = append(order, load, reads)
		rows[load] = map[string]expect{"docs/s": {NoDifference, 1}, "batch p50 ms": {NoDifference, 1}, "batch p99 ms": {NoDifference, 1}}
		rows[reads] = map[string]expect{"ops/s": {Slower, plantedSeconds}, "p50 ms": {NoDifference, 1}, "p99 ms": {Slower, plantedSeconds},
			"pages read/op": {NoDifference, 1}, "cache peak MB": {NoDifference, 1}, "dirty peak MB": {NoDifference, 1}, "app evict ms": {NoDifference, 1}}
	}
	order = append(order, "load, all rounds", "reads, all rounds")
	rows["load, all rounds"] = map[string]expect{"docs/s": {Slower, 5}, "batch p50 ms": {Slower, 5}, "batch p99 ms": {Slower, 5}}
	rows["reads, all rounds"] = map[string]expect{"ops/s": {Slower, 5 * plantedSeconds}, "p50 ms": {Slower, 5}, "p99 ms": {Slower, 5 * plantedSeconds},
		"pages read/op": {Slower, 5}, "cache peak MB": {Higher, 5}, "dirty peak MB": {Lower, 5}, "app evict ms": {Slower, 5}}
	return order, rows
}

// changes are the changes in percent of a step twice as slow: throughput
// halved, the dirty peak halved, everything else doubled.
var changes = map[string]float64{"ops/s": -50, "docs/s": -50, "dirty peak MB": -50}

// TestVerdictDirectionMeasureByMeasure: a run whose steps are twice as
// slow (ops/s and docs/s halved; p50, p99, batch latencies, pages read per
// operation and eviction time doubled; the cache peak doubled and the dirty
// peak halved) is slower measure by measure (higher and lower for the
// peaks), and the baseline compared with it is faster, measure by measure.
func TestVerdictDirectionMeasureByMeasure(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	fast := nightly(roundSteps(5, 1)).record(t, st)
	slow := nightly(roundSteps(5, 2)).record(t, st)
	order, rows := directionRows()
	for _, c := range []struct {
		name   string
		a, b   int64
		orient func(string) string
	}{{"twice as slow", fast, slow, func(v string) string { return v }}, {"twice as fast", slow, fast, mirror}} {
		res, err := Runs(ctx, st, c.a, c.b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Comparable || res.Alpha != DefaultAlpha || res.Test != TestMannWhitney {
			t.Fatalf("%s: comparable %v, reasons %v, alpha %v, test %s", c.name, res.Comparable, res.Reasons, res.Alpha, res.Test)
		}
		var got []string
		for _, s := range res.Steps {
			got = append(got, s.Step)
		}
		if !slices.Equal(got, order) {
			t.Fatalf("%s: rows %q, want %q", c.name, got, order)
		}
		for _, s := range res.Steps {
			want := rows[s.Step]
			measure := "ops/s"
			if s.Name == "load" {
				measure = "docs/s"
			}
			if v := c.orient(want[measure].verdict); s.Verdict != v {
				t.Errorf("%s: step %s: verdict %s, want %s (from %s)", c.name, s.Step, s.Verdict, v, measure)
			}
			if len(s.Measures) != len(want) {
				t.Errorf("%s: step %s: %d measures, want %d", c.name, s.Step, len(s.Measures), len(want))
			}
			for _, m := range s.Measures {
				w, ok := want[m.Measure]
				if !ok {
					t.Errorf("%s: step %s: unexpected measure %s", c.name, s.Step, m.Measure)
					continue
				}
				if v := c.orient(w.verdict); m.Verdict != v || m.NA != w.n || m.NB != w.n {
					t.Errorf("%s: step %s, %s: verdict %s on %d/%d values (%s), want %s on %d/%d", c.name, s.Step, m.Measure,
						m.Verdict, m.NA, m.NB, m.Test, v, w.n, w.n)
				}
				change, ok := changes[m.Measure]
				if !ok {
					change = 100
				}
				if c.a == slow {
					change = 100 * (100/(100+change) - 1)
				}
				if m.ChangePct == nil || math.Abs(*m.ChangePct-change) > 1.5 {
					t.Errorf("%s: step %s, %s: change %v%%, want %.0f%%", c.name, s.Step, m.Measure, m.ChangePct, change)
				}
			}
		}
		lines := res.VerdictLines()
		wantKind := c.orient(Slower)
		wantText := wantKind + " in ops/s: reads (round=1); reads (round=2); reads (round=3); reads (round=4); reads (round=5); load, all rounds; reads, all rounds"
		if len(lines) != 1 || lines[0].Kind != wantKind || lines[0].Text != wantText {
			t.Errorf("%s: verdict lines %+v, want %q", c.name, lines, wantText)
		}
	}
}

// alphaSeconds plants a reads step of 20 full seconds whose per-second
// throughput spreads over 1000 to 1190 ops/s, lowered by shift.
func alphaSeconds(shift float64) plantedStep {
	res := readsResult(20, 1095-shift, readP50, readP99, 0, 0, 0)
	for i := range res.Series {
		res.Series[i].Counts["read"] = int64(1000 + 10*float64((i*7)%20) - shift)
	}
	return plantedStep{name: "reads", result: res}
}

// TestAlphaDecides: drops whose evidence lies between two levels decide
// by --alpha: a 7% drop (Mann-Whitney p between 0.001 and 0.01; the
// bootstrap interval excludes 0 at 95% but not at 99.9%) is slower at
// alpha 0.05 (the default) and 0.01, and no difference at 0.001; a 4% drop
// (p between 0.05 and 0.1) is no difference at the default and slower at
// 0.1. The result states the level used.
func TestAlphaDecides(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	a := nightly([]plantedStep{alphaSeconds(0)}).record(t, st)
	drop7 := nightly([]plantedStep{alphaSeconds(70)}).record(t, st)
	drop4 := nightly([]plantedStep{alphaSeconds(40)}).record(t, st)
	for _, c := range []struct {
		b          int64
		test       string
		alpha      float64 // 0: the default
		want       string
		pLow, pTop float64 // the Mann-Whitney p lies in between
	}{
		{drop7, TestMannWhitney, 0, Slower, 0.001, 0.01},
		{drop7, TestMannWhitney, 0.05, Slower, 0.001, 0.01},
		{drop7, TestMannWhitney, 0.01, Slower, 0.001, 0.01},
		{drop7, TestMannWhitney, 0.001, NoDifference, 0.001, 0.01},
		{drop4, TestMannWhitney, 0, NoDifference, 0.05, 0.1},
		{drop4, TestMannWhitney, 0.1, Slower, 0.05, 0.1},
		{drop7, TestBootstrap, 0, Slower, 0, 0},
		{drop7, TestBootstrap, 0.05, Slower, 0, 0},
		{drop7, TestBootstrap, 0.001, NoDifference, 0, 0},
	} {
		res, err := Runs(ctx, st, a, c.b, Options{Alpha: c.alpha, Test: c.test, MinChange: -1}) // alpha alone decides
		if err != nil {
			t.Fatal(err)
		}
		level := c.alpha
		if level == 0 {
			level = DefaultAlpha
		}
		if len(res.Steps) != 1 || len(res.Steps[0].Measures) == 0 {
			t.Fatalf("run %d, %s at %v: steps %+v", c.b, c.test, c.alpha, res.Steps)
		}
		s, ops := res.Steps[0], res.Steps[0].Measures[0]
		if res.Alpha != level || s.Verdict != c.want || ops.Verdict != c.want || ops.Test != c.test || ops.NA != 20 || ops.NB != 20 {
			t.Errorf("run %d, %s at alpha %v: result alpha %v, step %s, ops/s %+v; want %s on 20/20 values", c.b, c.test, c.alpha, res.Alpha, s.Verdict, ops.Judgement, c.want)
		}
		if c.test == TestMannWhitney && (ops.P == nil || *ops.P <= c.pLow || *ops.P >= c.pTop) {
			t.Errorf("run %d: the planted drop's p is %v, want it between %v and %v", c.b, ops.P, c.pLow, c.pTop)
		}
		wantLine := fmt.Sprintf("no step is faster or slower in ops/s at alpha %g by 0%% or more", level)
		if c.want == Slower {
			wantLine = "slower in ops/s: reads"
		}
		if lines := res.VerdictLines(); len(lines) != 1 || lines[0].Text != wantLine {
			t.Errorf("run %d, %s at alpha %v: verdict lines %+v, want %q", c.b, c.test, c.alpha, lines, wantLine)
		}
	}
}

func sha(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// TestNotComparableReasons: runs that differ in one thing only (playbook,
// its text, a parameter's value, a parameter set in one run only, a
// server started or attached, its version or gitVersion, another server,
// the host's cores or its memory, even by a few MB, which the reason
// shows) are not comparable with that one reason,
// every step and measure saying so, and the run's regression verdict
// against its baseline says not comparable; --force judges them anyway.
// A run that differs in none of these (the same playbook in another
// directory, the host's kernel) is comparable.
func TestNotComparableReasons(t *testing.T) {
	ctx := context.Background()
	base := nightly(roundSteps(2, 1))
	const srv = "mongod started 7.0.2 (abc123)"
	for _, c := range []struct {
		name   string
		change func(r *plantedRun)
		reason string // "" comparable
		// noBaseline: the runs differ in playbook name or parameters, so
		// run A is not run B's baseline.
		noBaseline bool
	}{
		{"identical", func(r *plantedRun) {}, "", false},
		{"same playbook in another directory", func(r *plantedRun) { r.path = "/srv/wtd/nightly.lua" }, "", false},
		{"another kernel", func(r *plantedRun) { r.host.Kernel = "6.8.0" }, "", false},
		{"playbook", func(r *plantedRun) { r.path = "playbooks/weekly.lua" }, "different playbooks: playbooks/nightly.lua and playbooks/weekly.lua", true},
		{"playbook text", func(r *plantedRun) { r.text += "-- edited\n" },
			fmt.Sprintf("the playbook's text differs (sha256 %.12s and %.12s)", sha(base.text), sha(base.text+"-- edited\n")), false},
		{"parameter value", func(r *plantedRun) { r.params = map[string]any{"docs": 2000} }, "parameter docs: 1000 and 2000", true},
		{"parameter in one run", func(r *plantedRun) { r.params = map[string]any{"docs": 1000, "seconds": 5} }, "parameter seconds: (not set) and 5", true},
		{"server attached", func(r *plantedRun) { r.servers[0].Started = false; r.servers[0].Binary = "" },
			"servers differ: " + srv + " and mongod attached 7.0.2 (abc123)", false},
		{"server version", func(r *plantedRun) { r.servers[0].Version = "7.0.3" }, "servers differ: " + srv + " and mongod started 7.0.3 (abc123)", false},
		{"server gitVersion", func(r *plantedRun) { r.servers[0].GitVersion = "def456" }, "servers differ: " + srv + " and mongod started 7.0.2 (def456)", false},
		{"another server", func(r *plantedRun) {
			r.servers = append(r.servers, store.ServerRecord{Name: "other", Started: true, Version: "7.0.2", GitVersion: "abc123"})
		}, "servers differ: " + srv + " and " + srv + ", other started 7.0.2 (abc123)", false},
		{"host cores", func(r *plantedRun) { r.host.Cores = 4 }, "hosts differ: 2 cores 8.0 GB and 4 cores 8.0 GB", false},
		{"host memory", func(r *plantedRun) { r.host.MemoryBytes = 16 << 30 }, "hosts differ: 2 cores 8.0 GB and 2 cores 16.0 GB", false},
		{"host memory by 4 MiB", func(r *plantedRun) { r.host.MemoryBytes -= 4 << 20 },
			"hosts differ: 2 cores 8.0 GB (8589934592 bytes) and 2 cores 8.0 GB (8585740288 bytes)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t)
			a := base.record(t, st)
			other := nightly(roundSteps(2, 2))
			c.change(&other)
			b := other.record(t, st)
			res, err := Runs(ctx, st, a, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if c.reason != "" {
				want = []string{c.reason}
			}
			if !slices.Equal(res.Reasons, want) || res.Comparable != (c.reason == "") || res.Forced {
				t.Fatalf("comparable %v, forced %v, reasons %q; want %q", res.Comparable, res.Forced, res.Reasons, want)
			}
			for _, s := range res.Steps {
				want := Slower
				if s.Name == "load" {
					want = NoDifference // one value a side, or two rounds
				}
				if c.reason != "" {
					want = NotComparable
				}
				if s.Verdict != want || c.reason != "" && s.Note != c.reason {
					t.Errorf("step %s: %s (%s), want %s", s.Step, s.Verdict, s.Note, want)
				}
				for _, m := range s.Measures {
					if c.reason != "" && (m.Verdict != NotComparable || m.Test != "the runs are not comparable") {
						t.Errorf("step %s, %s: %s (%s), want not comparable", s.Step, m.Measure, m.Verdict, m.Test)
					}
				}
			}
			if c.reason != "" {
				forced, err := Runs(ctx, st, a, b, Options{Force: true})
				if err != nil {
					t.Fatal(err)
				}
				slower, _ := forced.SlowerFaster()
				if !forced.Forced || forced.Comparable || !slices.Equal(forced.Reasons, want) ||
					!slices.Equal(slower, []string{"reads (round=1)", "reads (round=2)", "reads, all rounds"}) {
					t.Errorf("--force: forced %v, reasons %q, slower %q", forced.Forced, forced.Reasons, slower)
				}
			}
			// The regression verdict: a baseline is the same playbook
			// name with the same parameters; a run that differs otherwise
			// is judged against it and not comparable.
			v, err := VerdictOf(ctx, st, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantVerdict, wantBaseline := Slower, a
			switch {
			case c.noBaseline:
				wantVerdict, wantBaseline, want = VerdictNoBaseline, 0, nil
			case c.reason != "":
				wantVerdict = NotComparable
			}
			if v.Verdict != wantVerdict || v.Baseline != wantBaseline || !slices.Equal(v.Reasons, want) {
				t.Errorf("regression verdict %s against %d, reasons %q; want %s against %d", v.Verdict, v.Baseline, v.Reasons, wantVerdict, wantBaseline)
			}
		})
	}
}

// TestFailedStepNotComparable: a step that failed (or was aborted) in
// either run is not comparable, measure by measure, with the step and run
// named; its round is left out of the all-rounds row; the other steps are
// judged as usual.
func TestFailedStepNotComparable(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		inA      bool
		status   string
		wantNote string
	}{
		{"failed in B", false, store.StatusFailed, "step 6 of run 2 failed"},
		{"failed in A", true, store.StatusFailed, "step 6 of run 1 failed"},
		{"aborted in B", false, store.StatusAborted, "step 6 of run 2 aborted"},
		{"aborted in A", true, store.StatusAborted, "step 6 of run 1 aborted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStore(t)
			a, b := nightly(roundSteps(5, 1)), nightly(roundSteps(5, 2))
			failing := &b
			if c.inA {
				failing = &a
			}
			failing.steps[5].status = c.status // reads (round=3), seq 6
			ida, idb := a.record(t, st), b.record(t, st)
			res, err := Runs(ctx, st, ida, idb, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Comparable {
				t.Fatalf("reasons %q: a failed step is not a reason the runs differ", res.Reasons)
			}
			seen := 0
			for _, s := range res.Steps {
				switch s.Step {
				case "reads (round=3)":
					seen++
					if s.Verdict != NotComparable || s.Note != c.wantNote || len(s.Measures) != 7 {
						t.Errorf("step %s: %s (%s), %d measures; want not comparable (%s)", s.Step, s.Verdict, s.Note, len(s.Measures), c.wantNote)
					}
					for _, m := range s.Measures {
						if m.Verdict != NotComparable || m.Test != c.wantNote {
							t.Errorf("step %s, %s: %s (%s), want not comparable (%s)", s.Step, m.Measure, m.Verdict, m.Test, c.wantNote)
						}
					}
				case "reads, all rounds":
					seen++
					if s.Verdict != Slower || !slices.Equal(s.SeqA, []int{2, 4, 8, 10}) || !slices.Equal(s.SeqB, []int{2, 4, 8, 10}) || s.Measures[0].NA != 4*plantedSeconds {
						t.Errorf("all rounds: %s, seqs %v and %v, %d values; want slower on rounds 1, 2, 4, 5", s.Verdict, s.SeqA, s.SeqB, s.Measures[0].NA)
					}
				case "reads (round=2)", "load, all rounds":
					seen++
					if s.Verdict != Slower {
						t.Errorf("step %s: %s (%s), want slower", s.Step, s.Verdict, s.Note)
					}
				}
			}
			if seen != 4 {
				t.Errorf("%d of the 4 rows checked were there: %+v", seen, res.Steps)
			}
		})
	}
}

// TestWarmupSecondsNotCompared: two runs whose measured seconds are the
// same, one with a warm-up far faster (and lower in p99) and the other
// with one far slower, are no different in ops/s and p99: the warm-up
// seconds, and the last partial second, never enter the tested values.
func TestWarmupSecondsNotCompared(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	step := func(warmOps, warmP99 float64) []plantedStep {
		return []plantedStep{{name: "reads", result: readsResult(plantedSeconds, readOps, readP50, readP99, 15, warmOps, warmP99)}}
	}
	a := nightly(step(1e7, 1)).record(t, st)
	b := nightly(step(1, 1e7)).record(t, st)
	res, err := Runs(ctx, st, a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 {
		t.Fatalf("steps %+v", res.Steps)
	}
	s := res.Steps[0]
	if s.Verdict != NoDifference {
		t.Errorf("reads: %s, want no difference", s.Verdict)
	}
	for _, m := range s.Measures {
		if m.Measure == "ops/s" || m.Measure == "p99 ms" {
			if m.Verdict != NoDifference || m.NA != plantedSeconds || m.NB != plantedSeconds || m.P == nil || *m.P != 1 {
				t.Errorf("%s: %s on %d/%d values, p %v; want no difference on the %d measured seconds (p 1)", m.Measure, m.Verdict, m.NA, m.NB, m.P, plantedSeconds)
			}
		}
	}
	// The warm-up is in the series: the full series differ.
	ops, _ := record.SecondSeries(record.StepFromStore(mustSteps(t, st, a)[0]))
	if len(ops) != 15+plantedSeconds+1 || ops[0] < 1e6 {
		t.Fatalf("run %d's series: %v, want 15 warm-up seconds at 1e7 first", a, ops)
	}
}

func mustSteps(t *testing.T, st *store.Store, run int64) []store.Step {
	t.Helper()
	steps, err := st.Steps(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// TestMeasuredInOneRunOnly: a measure one run has and the other has not
// (here the server figures: a run that could not sample its server) is not
// comparable, measure by measure, while the step's ops/s is judged.
func TestMeasuredInOneRunOnly(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	withServer := roundSteps(1, 1)[1:] // reads (round=1) with its server deltas
	without := roundSteps(1, 2)[1:]
	without[0].server = nil
	a, b := nightly(withServer).record(t, st), nightly(without).record(t, st)
	res, err := Runs(ctx, st, a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Verdict != Slower {
		t.Fatalf("steps %+v, want reads (round=1) slower", res.Steps)
	}
	got := map[string]string{}
	for _, m := range res.Steps[0].Measures {
		got[m.Measure] = m.Verdict + ": " + m.Test
		if (m.B == nil) != (m.Verdict == NotComparable) {
			t.Errorf("%s: %s with B %v", m.Measure, m.Verdict, m.B)
		}
	}
	const one = NotComparable + ": measured in one run only"
	want := map[string]string{"ops/s": Slower + ": mwu", "p50 ms": NoDifference + ": none: 1 and 1 values (a test needs 3 each)", "p99 ms": Slower + ": mwu",
		"pages read/op": one, "cache peak MB": one, "dirty peak MB": one, "app evict ms": one}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("measures %v,\nwant %v", got, want)
	}
}

// TestQuietSecondsNotCompared: seconds in which no read succeeded (a
// server that stopped answering) have no p99, whether left out as wtd
// records them or held as 0 beside a count of 0 as older runs did: the p99
// is tested on the other seconds only, and is no different from a run's
// with the same p99 in every second; their ops/s, a measured 0, are
// tested.
func TestQuietSecondsNotCompared(t *testing.T) {
	ctx := context.Background()
	const quiet = 8 // of plantedSeconds
	for name, p99s := range map[string]map[string]float64{"as recorded now": {}, "as recorded before": {"read": 0}} {
		st := newStore(t)
		stalled := readsResult(plantedSeconds, readOps, readP50, readP99, 0, 0, 0)
		for i := 5; i < 5+quiet; i++ {
			stalled.Series[i].Counts = map[string]int64{"read": 0}
			stalled.Series[i].P99Micros = p99s
			stalled.Series[i].Errors = map[string]int64{"read": 40}
		}
		a := nightly([]plantedStep{{name: "reads", result: readsResult(plantedSeconds, readOps, readP50, readP99, 0, 0, 0)}}).record(t, st)
		b := nightly([]plantedStep{{name: "reads", result: stalled}}).record(t, st)
		res, err := Runs(ctx, st, a, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Steps) != 1 {
			t.Fatalf("%s: steps %+v", name, res.Steps)
		}
		seen := 0
		for _, m := range res.Steps[0].Measures {
			switch m.Measure {
			case "p99 ms":
				seen++
				if m.NA != plantedSeconds || m.NB != plantedSeconds-quiet || m.Verdict != NoDifference {
					t.Errorf("%s: p99 %s on %d/%d values, want no difference on %d/%d: a quiet second has no p99", name, m.Verdict, m.NA, m.NB, plantedSeconds, plantedSeconds-quiet)
				}
			case "ops/s":
				seen++
				if m.NA != plantedSeconds || m.NB != plantedSeconds {
					t.Errorf("%s: ops/s on %d/%d values, want all %d on each side: a quiet second's 0 operations are measured", name, m.NA, m.NB, plantedSeconds)
				}
			}
		}
		if seen != 2 {
			t.Errorf("%s: measures %+v, want p99 and ops/s", name, res.Steps[0].Measures)
		}
	}
}
