package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/compare"
)

// plantedPlaybook records one step per planted series: its ops/s (and for
// reads a p99) are what $WTD_PLANTED gives for this run, as "name=value"
// words, so every run has the same playbook text and parameters.
const plantedPlaybook = `
local p = params{ clients = 8 }
local planted = {}
for name, v in os.getenv("WTD_PLANTED"):gmatch("(%w+)=(%S+)") do planted[name] = tonumber(v) end
for _, name in ipairs{ "reads", "late", "stairs" } do
  step{ name = name, run = function()
    local ops = planted[name]
    return { total = { count = ops * 10, ops_per_sec = ops, p50_micros = 400, p99_micros = planted[name .. "p99"] or 900 } }
  end }
end
`

// plantedNoise is the runs' noise, in percent of the level.
var plantedNoise = []float64{0.3, -0.8, 0.5, 1.0, -0.2, -1.0, 0.7, -0.4, 0.1, -0.6, 0.9, -0.3, 0.4, -0.9, 0.6, -0.1, 0.8, -0.7, 0.2, -0.5}

// plantedSeries are the values of the 20 recorded runs, by step:
//   - reads: about 1000 ops/s (1% noise) in runs 1-10, about 800 from run
//     11 on; its p99 goes from 900 to 1100 µs at the same run;
//   - late: about 1000 ops/s in runs 1-16, about 800 in the last 4;
//   - stairs: 1000 in runs 1-8, 900 in runs 9-11 (±10), 800 from run 12 on
//     (±2). The first pass splits the whole series at run 12 (runs 1-11
//     against 12-20), then runs 1-8 from 9-11 at run 9. Tested between its
//     neighbours (runs 9-11 against 12-20), the split at run 12 rests on
//     three noisy runs and gives p 0.003: the re-test drops it, and one
//     change point remains, at run 9 (1000 -> 825).
func plantedSeries() map[string][]float64 {
	out := map[string][]float64{
		"stairs": {1000, 1010, 990, 1005, 995, 1008, 992, 1000, 890, 910, 900, 800, 802, 798, 801, 799, 800, 802, 798, 800},
	}
	for i := range 20 {
		level, late, p99 := 1000.0, 1000.0, 900.0
		if i >= 10 {
			level, p99 = 800, 1100
		}
		if i >= 16 {
			late = 800
		}
		out["reads"] = append(out["reads"], level*(1+plantedNoise[i]/100))
		out["readsp99"] = append(out["readsp99"], p99*(1+plantedNoise[(i+3)%20]/100))
		out["late"] = append(out["late"], late*(1+plantedNoise[(i+7)%20]/100))
	}
	return out
}

// plantedRuns records the 20 runs of plantedPlaybook with wtd run and
// returns the database.
func plantedRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pb := filepath.Join(dir, "planted.lua")
	if err := os.WriteFile(pb, []byte(plantedPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "wtd.db")
	series := plantedSeries()
	for i := range 20 {
		var words []string
		for _, name := range []string{"reads", "readsp99", "late", "stairs"} {
			words = append(words, fmt.Sprintf("%s=%g", name, series[name][i]))
		}
		t.Setenv("WTD_PLANTED", strings.Join(words, " "))
		if res := runCLI(t, nil, "run", "--db", db, pb); res.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i+1, res.code, res.stderr)
		}
	}
	return db
}

// history runs wtd history --json with args and returns the series by step.
func history(t *testing.T, db string, args ...string) (*compare.History, map[string]compare.HistorySeries) {
	t.Helper()
	res := runCLI(t, nil, append([]string{"history", "--db", db, "--json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("history %v: exit %d\n%s", args, res.code, res.stderr)
	}
	var h compare.History
	if err := json.Unmarshal([]byte(res.stdout), &h); err != nil {
		t.Fatalf("history %v: %v\n%s", args, err, res.stdout)
	}
	byStep := map[string]compare.HistorySeries{}
	for _, s := range h.Series {
		byStep[s.Step] = s
	}
	return &h, byStep
}

// changesAt lists a series' change points as "kind at run N".
func changesAt(s compare.HistorySeries) []string {
	var out []string
	for _, c := range s.Changes {
		out = append(out, fmt.Sprintf("%s at run %d", c.Kind, c.Run))
	}
	return out
}

// TestHistoryFindsPlantedShifts records 20 runs of one playbook with the
// same parameters and planted shifts (plantedSeries) and checks what wtd
// history finds in them: the shift of reads at run 11 as a regression of
// about -20% (and its p99 rise as a regression too), the shift of late
// (4 runs after it) with --min-runs up to 4 and not with 5, one change
// point in stairs where the first pass had two, and too few runs said as
// such.
func TestHistoryFindsPlantedShifts(t *testing.T) {
	db := plantedRuns(t)

	h, series := history(t, db, "planted")
	if len(h.Runs) != 20 || h.MinRuns != compare.DefaultMinSegment || len(series) != 3 {
		t.Fatalf("history of %d runs, min runs %d, %d series", len(h.Runs), h.MinRuns, len(series))
	}
	reads := series["reads"].Changes
	if got := changesAt(series["reads"]); len(got) != 1 || got[0] != "regression at run 11" {
		t.Fatalf("reads: change points %v, want a regression at run 11", got)
	}
	if c := reads[0]; math.Abs(c.ChangePct+20) > 1 || math.Abs(c.Before-1000) > 10 || math.Abs(c.After-800) > 10 || !(c.P < h.Alpha) {
		t.Errorf("reads: %+v, want about 1000 -> 800 (-20%%) at p < %g", c, h.Alpha)
	}
	if got := changesAt(series["late"]); len(got) != 1 || got[0] != "regression at run 17" {
		t.Errorf("late: change points %v, want a regression at run 17", got)
	}
	if got := changesAt(series["stairs"]); len(got) != 1 || got[0] != "regression at run 9" || math.Abs(series["stairs"].Changes[0].After-825) > 1 {
		t.Errorf("stairs: change points %+v, want one regression at run 9 (1000 -> 825): the split at run 12 fails between its neighbours", series["stairs"].Changes)
	}

	// Latency: a p99 going up is a regression.
	_, p99 := history(t, db, "--metric", "p99", "planted")
	if got := changesAt(p99["reads"]); len(got) != 1 || got[0] != "regression at run 11" || math.Abs(p99["reads"].Changes[0].ChangePct-22.2) > 2 {
		t.Errorf("reads p99: change points %+v, want a regression of about +22%% at run 11", p99["reads"].Changes)
	}

	// --min-runs: late's shift has 4 runs after it.
	for _, tc := range []struct {
		minRuns string
		want    []string
	}{{"2", []string{"regression at run 17"}}, {"4", []string{"regression at run 17"}}, {"5", nil}, {"10", nil}} {
		h, series := history(t, db, "--min-runs", tc.minRuns, "planted")
		if got := changesAt(series["late"]); strings.Join(got, ",") != strings.Join(tc.want, ",") || fmt.Sprint(h.MinRuns) != tc.minRuns {
			t.Errorf("--min-runs %s: late's change points %v (min runs %d), want %v", tc.minRuns, got, h.MinRuns, tc.want)
		}
		if got := changesAt(series["reads"]); len(got) != 1 || got[0] != "regression at run 11" {
			t.Errorf("--min-runs %s: reads' change points %v, want a regression at run 11 (10 runs each side)", tc.minRuns, got)
		}
	}

	// The terminal says it too.
	res := runCLI(t, nil, "history", "--db", db, "planted")
	for _, want := range []string{"ops/s of planted: 20 ok runs with parameters clients=8, runs 1 to 20",
		"at alpha 0.001, at least 3 runs on each side", "\nreads\n", "  regression at run 11: -19.9% (1000 -> 800, p 1.1e-22)"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("history lacks %q:\n%s", want, res.stdout)
		}
	}

	// Too few runs for a change point is said, not shown as none found.
	for _, tc := range []struct {
		args []string
		want string
	}{{[]string{"--limit", "2"}, "too few runs (2; at least 6 needed)"}, {[]string{"--min-runs", "11"}, "too few runs (20; at least 22 needed)"}} {
		res := runCLI(t, nil, append([]string{"history", "--db", db}, append(tc.args, "planted")...)...)
		if res.code != 0 || strings.Count(res.stdout, "  "+tc.want+"\n") != 3 || strings.Contains(res.stdout, "no change point") {
			t.Errorf("history %v: exit %d, want %q for each step:\n%s%s", tc.args, res.code, tc.want, res.stdout, res.stderr)
		}
		_, series := history(t, db, append(tc.args, "planted")...)
		if s := series["reads"]; s.Note != tc.want || len(s.Changes) != 0 {
			t.Errorf("history --json %v: reads' note %q, change points %v, want note %q and none", tc.args, s.Note, changesAt(s), tc.want)
		}
	}
}
