package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wtd/compare"
	"wtd/engine/store"
	"wtd/internal/testruns"
)

func parseComparisons(t *testing.T, out string) []compare.Result {
	t.Helper()
	var rs []compare.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return rs
}

func TestCompareRecordedRuns(t *testing.T) {
	t.Parallel()
	fx := recordedRuns(t)
	res := runCLI(t, nil, "compare", "--db", fx.db, "1", "2")
	if res.code != 0 || !strings.Contains(res.stdout, "comparable: same playbook, parameters, servers and host") ||
		!strings.Contains(res.stdout, "│ reads, all rounds ") {
		t.Fatalf("compare 1 2: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	rs := parseComparisons(t, runCLI(t, nil, "compare", "--db", fx.db, "--json", "1", "2").stdout)
	if len(rs) != 1 || !rs[0].Comparable || len(rs[0].Steps) != 4 || len(rs[0].OnlyInA)+len(rs[0].OnlyInB) != 0 {
		t.Fatalf("comparison %+v", rs)
	}
	for _, s := range rs[0].Steps {
		ops := s.Measures[0]
		if ops.A == nil || ops.B == nil || ops.ChangePct == nil {
			t.Errorf("step %s: %+v", s.Step, ops)
		}
		// The load has one value a side and a two-second round its full
		// seconds (at most two): too few for a test, so no difference
		// whatever the figures. All rounds together give about four a
		// side, enough for a test; its verdict on two real runs is noise
		// (TestCompareCopiedAndPlantedRuns checks verdicts of known data).
		if s.Step != "reads, all rounds" && (s.Verdict != compare.NoDifference || ops.Verdict != compare.NoDifference || ops.NA > 2 || ops.P != nil ||
			!strings.HasPrefix(ops.Test, "none: ")) {
			t.Errorf("step %s: %s, %s on %d/%d values (%s), want no difference without a test", s.Step, s.Verdict, ops.Measure, ops.NA, ops.NB, ops.Test)
		}
		if s.Step == "reads, all rounds" && (ops.Measure != "ops/s" || ops.NA < 3 || ops.NB < 3 || ops.P == nil || ops.Test != compare.TestMannWhitney) {
			t.Errorf("all rounds: %+v", ops)
		}
		if s.Step == "load" && ops.Measure != "docs/s" {
			t.Errorf("load: %+v", ops)
		}
	}

	// Different parameters: not comparable, with the reasons, unless --force.
	res = runCLI(t, nil, "compare", "--db", fx.db, "1", "3")
	if res.code != 0 || !strings.Contains(res.stdout, "NOT COMPARABLE") || !strings.Contains(res.stdout, "parameter docs: 3000 and 2000") {
		t.Errorf("compare 1 3:\n%s%s", res.stdout, res.stderr)
	}
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", fx.db, "--json", "1", "3").stdout)
	for _, s := range rs[0].Steps {
		if s.Verdict != compare.NotComparable {
			t.Errorf("not comparable runs, step %s: %s", s.Step, s.Verdict)
		}
	}
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", fx.db, "--json", "--force", "--test", "bootstrap", "1", "2", "3").stdout)
	if len(rs) != 2 || rs[1].Comparable || !rs[1].Forced || rs[1].B.ID != 3 {
		t.Fatalf("forced: %+v", rs)
	}
	for _, s := range rs[1].Steps {
		if s.Verdict == compare.NotComparable {
			t.Errorf("--force, step %s: still not comparable", s.Step)
		}
	}
	for _, s := range rs[0].Steps {
		if s.Step == "reads, all rounds" && (s.Measures[0].CI == nil || s.Measures[0].Test != compare.TestBootstrap) {
			t.Errorf("bootstrap gave no interval: %+v", s.Measures[0])
		}
	}

	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", fx.db, "--json", "--measure", "ops/s,p99", "1", "2").stdout)
	for _, s := range rs[0].Steps {
		if len(s.Measures) != 2 || s.Measures[1].Measure != "p99 ms" && s.Measures[1].Measure != "batch p99 ms" {
			t.Errorf("--measure ops/s,p99: %+v", s.Measures)
		}
	}

	// The baseline of run 2 is run 1; run 1 has none.
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", fx.db, "--json", "--baseline", "2").stdout)
	if len(rs) != 1 || rs[0].A.ID != 1 || rs[0].B.ID != 2 {
		t.Errorf("baseline of 2: %+v", rs)
	}
	if res := runCLI(t, nil, "compare", "--db", fx.db, "--baseline", "1"); res.code != 2 || !strings.Contains(res.stderr, "no earlier ok run") {
		t.Errorf("baseline of 1: %+v", res)
	}
	for _, args := range [][]string{{"1"}, {"--baseline", "2", "1"}, {"--alpha", "2", "1", "2"}, {"--test", "t", "1", "2"}, {"1", "9"}, {"--measure", "speed", "1", "2"}} {
		if res := runCLI(t, nil, append([]string{"compare", "--db", fx.db}, args...)...); res.code != 2 {
			t.Errorf("compare %v: exit %d", args, res.code)
		}
	}
}

// TestCompareCopiedAndPlantedRuns: wtd compare gives the verdicts that
// data of a known difference must give. A recorded run compared with an
// exact copy of itself is no different in any step or measure (p = 1
// wherever there is a test); a reads step twice as slow (ops/s halved, p99
// doubled, every second) is slower, and the other way round faster, in the
// table, the verdict line and --json; a 7% drop whose Mann-Whitney p lies
// between 0.001 and 0.01 is slower at the default --alpha and at 0.01 and
// no difference at --alpha 0.001 (also with --test bootstrap).
func TestCompareCopiedAndPlantedRuns(t *testing.T) {
	fx := recordedRuns(t)
	ctx := context.Background()
	db := copyDB(t, fx.db)
	st, err := store.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	copied := testruns.Copy(t, st, 1)
	st.Close(ctx)
	rs := parseComparisons(t, runCLI(t, nil, "compare", "--db", db, "--json", "1", fmt.Sprint(copied)).stdout)
	if len(rs) != 1 || !rs[0].Comparable || len(rs[0].Steps) != 4 {
		t.Fatalf("run 1 and its copy: %+v", rs)
	}
	for _, s := range rs[0].Steps {
		if s.Verdict != compare.NoDifference {
			t.Errorf("copy, step %s: %s, want no difference", s.Step, s.Verdict)
		}
		for _, m := range s.Measures {
			if m.Verdict != compare.NoDifference || m.P != nil && *m.P != 1 || m.ChangePct != nil && *m.ChangePct != 0 {
				t.Errorf("copy, step %s, %s: %s, p %v, change %v; want no difference, p 1, no change", s.Step, m.Measure, m.Verdict, m.P, m.ChangePct)
			}
		}
	}
	for flag, want := range map[string]string{"": "a difference needs a change of at least 5% (--min-change)", "--min-change=12.5%": "at least 12.5% (--min-change)",
		"--min-change=0": "at least 0% (--min-change)"} {
		args := []string{"compare", "--db", db, "1", fmt.Sprint(copied)}
		if flag != "" {
			args = append(args, flag)
		}
		if res := runCLI(t, nil, args...); res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("compare %s: exit %d, want %q in\n%s%s", flag, res.code, want, res.stdout, res.stderr)
		}
	}
	for _, bad := range []string{"abc", "-1", "100%"} {
		res := runCLI(t, nil, "compare", "--db", db, "1", fmt.Sprint(copied), "--min-change="+bad)
		if res.code != 2 || !strings.Contains(res.stderr, fmt.Sprintf("--min-change %q: want a percentage from 0 to below 100, such as 5%%", bad)) {
			t.Errorf("compare --min-change=%s: exit %d\n%s", bad, res.code, res.stderr)
		}
	}
	if res := runCLI(t, nil, "compare", "--db", db, "1", fmt.Sprint(copied)); !strings.Contains(res.stdout, "verdict: no step is faster or slower in ops/s at alpha 0.05 by 5% or more\n") {
		t.Errorf("run 1 and its copy:\n%s%s", res.stdout, res.stderr)
	}

	planted := filepath.Join(t.TempDir(), "planted.db")
	st, err = store.Open(ctx, planted)
	if err != nil {
		t.Fatal(err)
	}
	base, drop7, half, p99s, p99sDoubled := make([]float64, 20), make([]float64, 20), make([]float64, 20), make([]float64, 20), make([]float64, 20)
	for i := range base {
		base[i] = 1000 + 10*float64((i*7)%20) // 1000 to 1190 ops/s
		drop7[i], half[i] = base[i]-70, base[i]/2
		p99s[i] = 800 + 8*float64(i%5)
		p99sDoubled[i] = 2 * p99s[i]
	}
	const path, text = "playbooks/reads.lua", "-- reads\n"
	testruns.Reads(t, st, path, text, base, p99s)        // run 1
	testruns.Reads(t, st, path, text, half, p99sDoubled) // run 2: twice as slow
	testruns.Reads(t, st, path, text, drop7, p99s)       // run 3: 7% slower
	st.Close(ctx)

	rowRE := func(measure, verdict string) *regexp.Regexp {
		return regexp.MustCompile(`│ ` + regexp.QuoteMeta(measure) + ` +│[^\n]*│ ` + verdict + ` +│\n`)
	}
	for _, c := range []struct {
		args      []string
		verdict   string // of the step and its ops/s and p99
		alpha     float64
		verdictLn string
		twice     bool // the runs twice as slow as each other
	}{
		{[]string{"1", "2"}, compare.Slower, 0.05, "verdict: slower in ops/s: reads", true},
		{[]string{"2", "1"}, compare.Faster, 0.05, "verdict: faster in ops/s: reads", true},
		{[]string{"1", "3"}, compare.Slower, 0.05, "verdict: slower in ops/s: reads", false},
		{[]string{"--alpha", "0.01", "1", "3"}, compare.Slower, 0.01, "verdict: slower in ops/s: reads", false},
		{[]string{"--alpha", "0.001", "1", "3"}, compare.NoDifference, 0.001, "verdict: no step is faster or slower in ops/s at alpha 0.001 by 5% or more", false},
		{[]string{"--test", "bootstrap", "1", "3"}, compare.Slower, 0.05, "verdict: slower in ops/s: reads", false},
		{[]string{"--test", "bootstrap", "--alpha", "0.001", "1", "3"}, compare.NoDifference, 0.001, "verdict: no step is faster or slower in ops/s at alpha 0.001 by 5% or more", false},
	} {
		res := runCLI(t, nil, append([]string{"compare", "--db", planted}, c.args...)...)
		if res.code != 0 || !strings.Contains(res.stdout, c.verdictLn+"\n") || !rowRE("ops/s", c.verdict).MatchString(res.stdout) ||
			!strings.Contains(res.stdout, fmt.Sprintf(" at alpha %g, ", c.alpha)) {
			t.Errorf("compare %v: exit %d, want ops/s %s and %q\n%s%s", c.args, res.code, c.verdict, c.verdictLn, res.stdout, res.stderr)
		}
		rs := parseComparisons(t, runCLI(t, nil, append([]string{"compare", "--db", planted, "--json"}, c.args...)...).stdout)
		if len(rs) != 1 || len(rs[0].Steps) != 1 || rs[0].Alpha != c.alpha {
			t.Fatalf("compare --json %v: %+v", c.args, rs)
		}
		s := rs[0].Steps[0]
		ops := s.Measures[0]
		if s.Verdict != c.verdict || ops.Measure != "ops/s" || ops.Verdict != c.verdict || ops.NA != 20 || ops.NB != 20 {
			t.Errorf("compare --json %v: step %s, %s %s on %d/%d values; want %s on 20/20", c.args, s.Verdict, ops.Measure, ops.Verdict, ops.NA, ops.NB, c.verdict)
		}
		if !c.twice && ops.Test == compare.TestMannWhitney && (ops.P == nil || *ops.P <= 0.001 || *ops.P >= 0.01) {
			t.Errorf("the planted 7%% drop has p %v, want it between 0.001 and 0.01", ops.P)
		}
		if c.twice {
			// Twice as slow: the p99 of each second doubled is slower (or,
			// the other way round, faster) too.
			for _, m := range s.Measures {
				if m.Measure == "p99 ms" && (m.Verdict != c.verdict || m.NA != 20 || !rowRE("p99 ms", c.verdict).MatchString(res.stdout)) {
					t.Errorf("compare %v: p99 %s on %d/%d values, want %s", c.args, m.Verdict, m.NA, m.NB, c.verdict)
				}
			}
		}
	}
}

func TestHistoryRecordedRuns(t *testing.T) {
	fx := recordedRuns(t)
	res := runCLI(t, nil, "history", "--db", fx.db, "fixture")
	if res.code != 0 || !strings.Contains(res.stdout, "ops/s of fixture: 1 ok run with parameters docs=2000") ||
		!strings.Contains(res.stdout, "(2 ok runs with other parameters left out)") || !strings.Contains(res.stdout, "reads (round=2)") {
		t.Errorf("history:\n%s%s", res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "history", "--db", fx.db, "--json", "--metric", "p99", "fixture.lua")
	var h compare.History
	if err := json.Unmarshal([]byte(res.stdout), &h); err != nil {
		t.Fatalf("%v: %s", err, res.stdout)
	}
	if h.Measure != "p99 ms" || len(h.Series) != 3 || len(h.Series[1].Points) != 1 || h.Series[1].Points[0].Value == nil {
		t.Errorf("history %+v", h)
	}
	if res := runCLI(t, nil, "history", "--db", fx.db, "--metric", "speed", "fixture"); res.code != 2 {
		t.Errorf("unknown measure: exit %d", res.code)
	}
	if res := runCLI(t, nil, "history", "--db", fx.db, "nosuch"); res.code != 2 {
		t.Errorf("unknown playbook: exit %d", res.code)
	}
}
