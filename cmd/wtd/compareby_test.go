package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"wtd/compare"
)

// byPlaybook reads at an open-loop rate set by the size label: twice the
// rate at size 1 as at size 0.25, so that a comparison by size knows
// what it must find. cacheSizeGB, a label beside size, changes with it.
const byPlaybook = `
local p = params{ sizes = "0.25,1", rounds = 2 }
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "t.c", docs = 2000, doc_bytes = 200 }
local rates = { ["0.25"] = 100, ["1"] = 200 }
for size in string.gmatch(p.sizes, "[^,]+") do
  for round = 1, p.rounds do
    step{ name = "reads", size = size, cacheSizeGB = size, round = round, run = function()
      return m:workload{ ns = "t.c", duration = 4, mix = { read = 1 }, rate = rates[size], threads = 2 }
    end }
  end
end
report.table{ by = "size", title = "by size", verdict = true }
`

func TestCompareBySetting(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	dir := t.TempDir()
	db, pb := filepath.Join(dir, "wtd.db"), filepath.Join(dir, "by.lua")
	if err := os.WriteFile(pb, []byte(byPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"WTD_STATE_DIR": filepath.Join(dir, "state")}
	for _, sizes := range []string{"0.25,1", "0.25", "1"} {
		if res := runCLI(t, env, "run", "--db", db, "--mongod", mm, pb, "-p", "sizes="+sizes); res.code != 0 {
			t.Fatalf("run sizes=%s: %d\n%s", sizes, res.code, res.stderr)
		}
	}

	// Within run 1: size 1 against size 0.25, both rounds together.
	rs := parseComparisons(t, runCLI(t, nil, "compare", "--db", db, "1", "--by", "size", "--json").stdout)
	if len(rs) != 1 || rs[0].By == nil || rs[0].By.Base != "0.25" || strings.Join(rs[0].By.Values, ",") != "0.25,1" ||
		strings.Join(rs[0].By.Alongside, ",") != "cacheSizeGB" {
		t.Fatalf("by size: %+v", rs)
	}
	if len(rs[0].Steps) != 1 {
		t.Fatalf("by size: want the one row reads, size=1; got %+v", rs[0].Steps)
	}
	row := rs[0].Steps[0]
	ops := row.Measures[0]
	if row.Step != "reads, size=1" || row.Value != "1" || !row.Rounds || len(row.SeqA) != 2 || len(row.SeqB) != 2 ||
		ops.Measure != "ops/s" || ops.Verdict != compare.Faster || ops.ChangePct == nil || *ops.ChangePct < 80 || *ops.ChangePct > 120 || ops.NA < 4 {
		t.Fatalf("by size row: %+v\nops/s: %+v", row, ops)
	}
	out := runCLI(t, nil, "compare", "--db", db, "1", "--by", "size")
	if out.code != 0 || !strings.Contains(out.stdout, "steps of each size (0.25, 1) compared with size=0.25, all rounds together") ||
		!strings.Contains(out.stdout, "left out of the matching: cacheSizeGB") || !strings.Contains(out.stdout, "faster in ops/s: reads, size=1") {
		t.Fatalf("compare --by:\n%s%s", out.stdout, out.stderr)
	}
	// A setting works as a label does: every step ran with cacheSizeGB
	// 0.25, so there is nothing to compare, and the error says so.
	if res := runCLI(t, nil, "compare", "--db", db, "2", "--by", "size"); res.code != 2 || !strings.Contains(res.stderr, "every step of run 2 with size has the value 0.25: nothing to compare") {
		t.Fatalf("one value: %d\n%s", res.code, res.stderr)
	}
	if res := runCLI(t, nil, "compare", "--db", db, "1", "--by", "colour"); res.code != 2 || !strings.Contains(res.stderr, `no step of run 1 has a label or setting "colour"; its labels: cacheSizeGB, round, size`) {
		t.Fatalf("unknown label: %d\n%s", res.code, res.stderr)
	}
	if res := runCLI(t, nil, "compare", "--db", db, "1", "2", "--by", "size"); res.code != 2 || !strings.Contains(res.stderr, "compares within one run") {
		t.Fatalf("two runs with --by: %d\n%s", res.code, res.stderr)
	}

	// Across runs 2 (sizes=0.25) and 3 (sizes=1): size and cacheSizeGB
	// carry the parameter's values, so steps match without naming them
	// and the parameter is no reason the runs are not comparable.
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", db, "2", "3", "--json").stdout)
	if len(rs) != 1 || !rs[0].Comparable || len(rs[0].Across) != 2 || rs[0].Across[0].Label != "cacheSizeGB" || rs[0].Across[1].Parameter != "sizes" {
		t.Fatalf("across: %+v", rs)
	}
	var all *compare.StepRow
	for i, s := range rs[0].Steps {
		if s.Rounds {
			all = &rs[0].Steps[i]
		}
	}
	if all == nil || all.Step != "reads, all rounds" || all.Measures[0].Verdict != compare.Faster {
		t.Fatalf("across, all rounds: %+v", rs[0].Steps)
	}
	out = runCLI(t, nil, "compare", "--db", db, "2", "3")
	if !strings.Contains(out.stdout, "steps matched across size 0.25 (run 2) and 1 (run 3), from parameter sizes") {
		t.Fatalf("compare 2 3:\n%s", out.stdout)
	}
	// Named: run 1 against run 2, whose values overlap, match across size
	// only when asked; the parameter differs only in those values.
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", db, "1", "2", "--json").stdout)
	if len(rs[0].Across) != 0 || rs[0].Comparable {
		t.Fatalf("1 2 without --ignore-label: %+v", rs[0])
	}
	rs = parseComparisons(t, runCLI(t, nil, "compare", "--db", db, "2", "1", "--ignore-label", "size,cacheSizeGB", "--json").stdout)
	if len(rs[0].Across) != 2 || !rs[0].Comparable || len(rs[0].OnlyInB) != 2 {
		t.Fatalf("2 1 --ignore-label: %+v", rs[0])
	}

	// The playbook's table has the verdict column, from the same test.
	show := runCLI(t, nil, "show", "--db", db, "1")
	if !regexp.MustCompile(`faster( \(not reliable\))? \+\d+\.\d% \(p `).MatchString(show.stdout) || !strings.Contains(show.stdout, "VS SIZE=0.25") {
		t.Fatalf("show 1: the table's verdict column:\n%s", show.stdout)
	}

	// The report shows the comparison the table asked for; --by names one.
	page := runCLI(t, nil, "report", "--db", db, "1", "-o", "-")
	if page.code != 0 || !strings.Contains(page.stdout, "Run 1: the steps of each size compared with size=0.25") ||
		!strings.Contains(page.stdout, "Labels that change with size, left out of the matching: cacheSizeGB.") {
		t.Fatalf("report 1: %d\n%s", page.code, page.stderr)
	}
	page = runCLI(t, nil, "report", "--db", db, "1", "-o", "-", "--by", "colour")
	if page.code == 0 || !strings.Contains(page.stderr, `no step of run 1 has a label or setting "colour"`) {
		t.Fatalf("report --by colour: %d\n%s", page.code, page.stderr)
	}
}
