package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	"wtd/engine/record"
)

func TestShowRecordedRun(t *testing.T) {
	fx := recordedRuns(t)
	res := runCLI(t, nil, "show", "--db", fx.db, "latest:fixture")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	out := res.stdout
	// The latest run of the playbook is the shrunk one; its parameters
	// appear once, not per step.
	if !strings.HasPrefix(out, "run 3  ok") || strings.Count(out, "docs=2000") != 1 || !strings.Contains(out, "params:    docs=2000 gb=0.25 seconds=1") {
		t.Errorf("header:\n%s", out)
	}
	for _, want := range []string{
		"servers:   m1 mongodb://127.0.0.1:", "started by wtd from ",
		"step 2  reads  ok  start +", "caches cleared:", "drop_caches (confirmed)", "data / memory:", "repetitions:           2; ops/s min",
		"failed ops, swapping:  0 failed; swap", "Cached after:",
		"fixture\t2000", "partial line", "info  playbook round 1 done", "report.table (redrawn from the record):", "│ fixture table",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q", want)
		}
	}
	// Output and events come in time order: the first print before the
	// load started, the table last.
	if i, j, k := strings.Index(out, "  fixture\t2000"), strings.Index(out, "load started"), strings.Index(out, "│ fixture table"); i < 0 || j < i || k < j {
		t.Errorf("output out of order (%d %d %d):\n%s", i, j, k, out)
	}
	// The steps table: start offsets increase and durations are shown.
	var starts []float64
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 5 && (f[1] == "load" || f[1] == "reads") && strings.HasPrefix(f[len(f)-2], "+") {
			s, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(f[len(f)-2], "+"), "s"), 64)
			starts = append(starts, s)
		}
	}
	if len(starts) != 3 || !(starts[0] <= starts[1] && starts[1] < starts[2]) {
		t.Errorf("step starts %v\n%s", starts, out)
	}

	js := runCLI(t, nil, "show", "--db", fx.db, "--json", "2")
	var doc struct {
		Run struct {
			ID        int64
			Params    map[string]any
			DurationS *float64 `json:"duration_s"`
			Trigger   string
		}
		Servers []struct{ Name, Version string }
		Steps   []struct {
			Seq              int
			Name             string
			StartOffsetS     float64                        `json:"start_offset_s"`
			DurationS        *float64                       `json:"duration_s"`
			ProvenanceFields []struct{ Name, Value string } `json:"provenance_fields"`
			Result           map[string]any
		}
		Output []struct {
			Source, Message string
			OffsetS         float64 `json:"offset_s"`
		}
		Tables []struct {
			Title string
			Steps []int
			Text  string
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("show --json: %v\n%s", err, js.stdout)
	}
	if doc.Run.ID != 2 || doc.Run.Params["docs"] != 3000.0 || doc.Run.DurationS == nil || doc.Run.Trigger != "cli" || len(doc.Servers) != 1 {
		t.Errorf("run %+v servers %+v", doc.Run, doc.Servers)
	}
	if len(doc.Steps) != 3 || doc.Steps[1].DurationS == nil || *doc.Steps[1].DurationS < 1.9 || len(doc.Steps[1].ProvenanceFields) != 8 ||
		doc.Steps[1].Result["series"] == nil {
		t.Errorf("steps %+v", doc.Steps)
	}
	if len(doc.Tables) != 1 || doc.Tables[0].Title != "fixture table" || len(doc.Tables[0].Steps) != 3 || !strings.Contains(doc.Tables[0].Text, "reads") {
		t.Errorf("tables %+v", doc.Tables)
	}
	var prints []string
	last := -1.0
	for _, o := range doc.Output {
		if o.OffsetS < last {
			t.Errorf("output not in time order at %q", o.Message)
		}
		last = o.OffsetS
		if o.Source == "print" {
			prints = append(prints, o.Message)
		}
	}
	if strings.Join(prints, "|") != "fixture\t3000|partial line" {
		t.Errorf("print lines %q", prints)
	}

	if res := runCLI(t, nil, "show", "--db", fx.db, "latest:nosuch"); res.code != 2 || !strings.Contains(res.stderr, "no run of playbook nosuch") {
		t.Errorf("latest:nosuch: %+v", res)
	}
}

func TestRunsFilters(t *testing.T) {
	fx := recordedRuns(t)
	res := runCLI(t, nil, "runs", "--db", fx.db)
	if res.code != 0 || !strings.Contains(res.stdout, "docs=2000 seconds=1 gb=0.25") || !strings.Contains(res.stdout, "TRIGGER") || !strings.Contains(res.stdout, "│ cli ") {
		t.Errorf("runs:\n%s%s", res.stdout, res.stderr)
	}
	list := func(args ...string) []int64 {
		t.Helper()
		res := runCLI(t, nil, append([]string{"runs", "--db", fx.db, "--json"}, args...)...)
		if res.code != 0 {
			t.Fatalf("runs %v: %s", args, res.stderr)
		}
		var docs []struct{ ID int64 }
		if err := json.Unmarshal([]byte(res.stdout), &docs); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, d := range docs {
			ids = append(ids, d.ID)
		}
		return ids
	}
	eq := func(got []int64, want ...int64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}
	if got := list("--playbook", "fixture"); !eq(got, 3, 2, 1) {
		t.Errorf("--playbook fixture: %v", got)
	}
	if got := list("--playbook", "other.lua"); !eq(got) {
		t.Errorf("--playbook other.lua: %v", got)
	}
	if got := list("--status", "failed"); !eq(got) {
		t.Errorf("--status failed: %v", got)
	}
	if got := list("--status", "ok", "--limit", "2"); !eq(got, 3, 2) {
		t.Errorf("--status ok --limit 2: %v", got)
	}
	if got := list("--since", "1h"); !eq(got, 3, 2, 1) {
		t.Errorf("--since 1h: %v", got)
	}
	if got := list("--since", time.Now().Add(48*time.Hour).Format("2006-01-02")); !eq(got) {
		t.Errorf("--since the day after tomorrow: %v", got)
	}
	if res := runCLI(t, nil, "runs", "--db", fx.db, "--status", "good"); res.code != 2 {
		t.Errorf("--status good: exit %d", res.code)
	}
	if res := runCLI(t, nil, "runs", "--db", fx.db, "--since", "yesterday"); res.code != 2 {
		t.Errorf("--since yesterday: exit %d", res.code)
	}
}

func TestRmAndPrune(t *testing.T) {
	fx := recordedRuns(t)
	db := copyDB(t, fx.db)
	if res := runCLI(t, nil, "rm", "--db", db, "2", "9"); res.code != 2 || !strings.Contains(res.stderr, "no run 9") {
		t.Errorf("rm 2 9: %+v", res)
	}
	if res := runCLI(t, nil, "show", "--db", db, "2"); res.code != 0 {
		t.Errorf("run 2 deleted by a failed rm")
	}
	if res := runCLI(t, nil, "rm", "--db", db, "2", "latest"); res.code != 0 || res.stdout != "deleted run 2\ndeleted run 3\n" {
		t.Errorf("rm 2 latest: %+v", res)
	}
	if res := runCLI(t, nil, "show", "--db", db, "2"); res.code != 2 {
		t.Errorf("show of a deleted run: %+v", res)
	}
	if res := runCLI(t, nil, "samples", "--db", db, "1", "--metric", "cpu.user", "--source", "host"); res.code != 0 || strings.Count(res.stdout, "\n") < 5 {
		t.Errorf("samples of the kept run: %+v", res)
	}
	if res := runCLI(t, nil, "prune", "--db", db); res.code != 2 {
		t.Errorf("prune without --keep-days: exit %d", res.code)
	}
	if res := runCLI(t, nil, "prune", "--db", db, "--keep-days", "1"); res.code != 0 || !strings.HasPrefix(res.stdout, "deleted 0 runs") {
		t.Errorf("prune --keep-days 1: %+v", res)
	}
	if res := runCLI(t, nil, "prune", "--db", db, "--keep-days", "0"); res.code != 0 || !strings.HasPrefix(res.stdout, "deleted 1 runs") || !strings.HasSuffix(res.stdout, ": 1\n") {
		t.Errorf("prune --keep-days 0: %+v", res)
	}
	if res := runCLI(t, nil, "runs", "--db", db, "--json"); strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("runs left: %s", res.stdout)
	}
}

func TestSamplesColumnsRatesAndSteps(t *testing.T) {
	fx := recordedRuns(t)
	const pagesRead = "wiredTiger.cache.pages read into cache"
	const cacheBytes = "wiredTiger.cache.bytes currently in the cache"
	res := runCLI(t, nil, "samples", "--db", fx.db, "1", "--match", "CACHE.BYTES CURRENTLY")
	if res.code != 0 || strings.TrimSpace(res.stdout) != cacheBytes {
		t.Errorf("--match in any case: %q %s", res.stdout, res.stderr)
	}
	res = runCLI(t, nil, "samples", "--db", fx.db, "1", "--metric", cacheBytes, "--metric", "opcounters.query")
	if res.code != 0 {
		t.Fatalf("samples: %s", res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if lines[0] != "time,seconds,step,step_name,"+cacheBytes+",opcounters.query" {
		t.Errorf("header %q", lines[0])
	}
	steps := map[string]bool{}
	for _, l := range lines[1:] {
		c := strings.Split(l, ",")
		if len(c) != 6 {
			t.Fatalf("row %q", l)
		}
		steps[c[2]+" "+c[3]] = true
		if strings.ContainsAny(c[4]+c[5], "eE") {
			t.Errorf("not a plain decimal: %q", l)
		}
	}
	for _, want := range []string{"1 load", "2 reads (round=1)", "3 reads (round=2)"} {
		if !steps[want] {
			t.Errorf("no sample in step %q: %v", want, steps)
		}
	}
	// Rates: the restart before round 2 resets the counter; no rate is
	// negative, and during the reads steps queries run at hundreds a second.
	res = runCLI(t, nil, "samples", "--db", fx.db, "1", "--rate", "--metric", "opcounters.query", "--metric", pagesRead, "--format", "json")
	var doc struct {
		Metrics []string
		Rows    []struct {
			Seconds float64
			Step    *int
			Values  []*float64
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("%v: %s %s", err, res.stdout, res.stderr)
	}
	maxQ := 0.0
	for _, r := range doc.Rows {
		for _, v := range r.Values {
			if v != nil && *v < 0 {
				t.Errorf("negative rate at %.1f s: %v", r.Seconds, *v)
			}
		}
		if r.Step != nil && *r.Step >= 2 && r.Values[0] != nil {
			maxQ = math.Max(maxQ, *r.Values[0])
		}
	}
	if len(doc.Rows) < 10 || doc.Metrics[1] != pagesRead || maxQ < 100 {
		t.Errorf("%d rows, metrics %v, top query rate %.0f", len(doc.Rows), doc.Metrics, maxQ)
	}
	// The rates are the counter's, not its running total: the rate times
	// the time between samples adds up to the queries the counter counted,
	// from zero again after the restart (which the run does have).
	res = runCLI(t, nil, "samples", "--db", fx.db, "1", "--metric", "opcounters.query", "--format", "json")
	var raw struct{ Rows []struct{ Values []*float64 } }
	if err := json.Unmarshal([]byte(res.stdout), &raw); err != nil || len(raw.Rows) != len(doc.Rows) {
		t.Fatalf("raw samples: %v, %d rows for %d rates", err, len(raw.Rows), len(doc.Rows))
	}
	counted, drawn, drops := 0.0, 0.0, 0
	for i := 1; i < len(raw.Rows); i++ {
		prev, v, rate := raw.Rows[i-1].Values[0], raw.Rows[i].Values[0], doc.Rows[i].Values[0]
		if prev == nil || v == nil || rate == nil {
			t.Fatalf("row %d: query counter %v after %v, rate %v", i, v, prev, rate)
		}
		if *v >= *prev {
			counted += *v - *prev
		} else {
			counted, drops = counted+*v, drops+1
		}
		drawn += *rate * (doc.Rows[i].Seconds - doc.Rows[i-1].Seconds)
	}
	if drops == 0 || !(counted >= 100 && math.Abs(drawn-counted) <= 0.01*counted) {
		t.Errorf("queries: the rates add up to %.1f, the counter counted %.0f (%d restarts)", drawn, counted, drops)
	}
	if res := runCLI(t, nil, "samples", "--db", fx.db, "1", "--metric", "no such"); res.code != 2 || !strings.Contains(res.stderr, `no metric "no such"`) {
		t.Errorf("unknown metric: %+v", res)
	}
}

func TestRates(t *testing.T) {
	t0 := time.Unix(0, 0)
	ts := []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(4 * time.Second), t0.Add(5 * time.Second)}
	got := record.Rates(ts, []float64{100, 150, 30, 50, math.NaN()})
	want := []float64{math.NaN(), 50, 30, 10, math.NaN()}
	for i := range want {
		if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Errorf("rate %d = %v, want %v", i, got[i], want[i])
		}
	}
}
