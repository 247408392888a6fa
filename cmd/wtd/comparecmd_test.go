package main

import (
	"encoding/json"
	"strings"
	"testing"

	"wtd/engine/compare"
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
	valid := map[string]bool{compare.Faster: true, compare.Slower: true, compare.NoDifference: true}
	for _, s := range rs[0].Steps {
		if !valid[s.Verdict] {
			t.Errorf("step %s: verdict %q", s.Step, s.Verdict)
		}
		ops := s.Measures[0]
		if ops.A == nil || ops.B == nil || ops.ChangePct == nil {
			t.Errorf("step %s: %+v", s.Step, ops)
		}
		// Two-second reads give their full seconds (two) to the test; all
		// rounds together give about four a side, enough for a test.
		if s.Step == "reads, all rounds" && (ops.Measure != "ops/s" || ops.NA < 3 || ops.NB < 3 || ops.P == nil) {
			t.Errorf("all rounds: %+v", ops)
		}
		if s.Step == "load" && (ops.Measure != "docs/s" || ops.P != nil) {
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
