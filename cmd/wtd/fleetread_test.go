package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/fleet"
	"wtd/internal/testbin"
	"wtd/internal/testbrowser"
	"wtd/report"
	"wtd/web"
)

// fleetRatePlaybook reads at the rate $WTD_FLEET_RATE gives (ops/s), so
// that a host's runs can slow down with the playbook's text and
// parameters unchanged, as a host whose disk got slower would. With
// $WTD_FLEET_SKIP=1 its reads step reads nothing: an ok run that did not
// measure the step.
const fleetRatePlaybook = `
local m = mongod.start{}
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = 2000, doc_bytes = 200 } end }
step{ name = "reads", run = function()
  if os.getenv("WTD_FLEET_SKIP") == "1" then return end
  return m:workload{ ns = "t.c", duration = 5, rate = tonumber(os.getenv("WTD_FLEET_RATE") or "400"), mix = { read = 1 } }
end }
`

// fleetTwoHosts runs fleetRatePlaybook six times on each of two hosts
// (two results databases, so two host ids) and pushes them to one
// results server: host A at 400 ops/s, then 200 from its fourth run on;
// host B at 400 throughout, with one more run, its fourth, that read
// nothing (seven runs; its runs 5 to 7 are its fourth to sixth that
// read). It returns the results server's URI and the two databases.
func fleetTwoHosts(t *testing.T) (uri, dbA, dbB string) {
	t.Helper()
	_, mm := binaries(t)
	results := testbin.StartMinimongod(t, 0)
	pb := writePlaybook(t, fleetRatePlaybook)
	// Not t.Setenv: the test runs in parallel with others, and only this
	// playbook reads these variables.
	t.Cleanup(func() { os.Unsetenv("WTD_FLEET_RATE"); os.Unsetenv("WTD_FLEET_SKIP") })
	dbA, dbB = filepath.Join(t.TempDir(), "wtd.db"), filepath.Join(t.TempDir(), "wtd.db")
	for i := range 6 {
		if i == 3 {
			os.Setenv("WTD_FLEET_SKIP", "1")
			if r := runCLI(t, nil, "--db", dbB, "run", "--mongod", mm, "--sample-interval", "500ms", pb); r.code != 0 {
				t.Fatalf("wtd run reading nothing: %d\n%s", r.code, r.stderr)
			}
			os.Unsetenv("WTD_FLEET_SKIP")
		}
		for _, db := range []string{dbA, dbB} {
			rate := "400"
			if db == dbA && i >= 3 {
				rate = "200"
			}
			os.Setenv("WTD_FLEET_RATE", rate)
			if r := runCLI(t, nil, "--db", db, "run", "--mongod", mm, "--sample-interval", "500ms", pb); r.code != 0 {
				t.Fatalf("wtd run %d: %d\n%s", i+1, r.code, r.stderr)
			}
		}
	}
	for _, db := range []string{dbA, dbB} {
		if r := runCLI(t, nil, "--db", db, "push", "--all", "--results", results.URI, "--results-db", "fleet"); r.code != 0 {
			t.Fatalf("wtd push --all: %d %s%s", r.code, r.stdout, r.stderr)
		}
	}
	return results.URI, dbA, dbB
}

// hostOfDB is the host id of results database db.
func hostOfDB(t *testing.T, db string) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	id, err := st.HostID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// compareLocal compares run 6 of dbB with run 6 of dbA read from the
// hosts' own databases and returns reads' ops/s row.
func compareLocal(t *testing.T, dbA, dbB string) *compare.MeasureRow {
	t.Helper()
	ctx := context.Background()
	var recs []*record.Record
	for _, db := range []string{dbA, dbB} {
		st, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := record.LoadSteps(ctx, st, 6)
		st.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	for _, s := range compare.Records(recs[0], recs[1], compare.Options{}).Steps {
		for i, m := range s.Measures {
			if s.Step == "reads" && m.Measure == "ops/s" {
				return &s.Measures[i]
			}
		}
	}
	return nil
}

// TestHistoryAndCompareAcrossHosts: two hosts push six runs each of one
// playbook; host A's reads drop from 400 to 200 ops/s at its fourth run.
// wtd history --results finds that change point on host A and none on
// host B, --host picks one host; wtd compare of host A's last run with
// host B's gives a slower verdict on reads from the per-second values, as
// compare of the same runs read from the hosts' own databases does.
func TestHistoryAndCompareAcrossHosts(t *testing.T) {
	t.Parallel()
	uri, dbA, dbB := fleetTwoHosts(t)
	all := fleetRuns(t, uri)
	if len(all) != 13 {
		t.Fatalf("wtd runs --results: %d runs, want 13", len(all))
	}
	idA, idB := hostOfDB(t, dbA), hostOfDB(t, dbB)
	if idA == idB || idA == "" {
		t.Fatalf("host ids %q and %q", idA, idB)
	}

	r := runCLI(t, nil, "history", "pb", "--results", uri, "--results-db", "fleet", "--json")
	if r.code != 0 {
		t.Fatalf("wtd history --results: %d\n%s", r.code, r.stderr)
	}
	var h compare.HostsHistory
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatalf("wtd history --results --json: %v\n%s", err, r.stdout)
	}
	byHost := map[string]compare.HostHistory{}
	for _, hh := range h.Hosts {
		byHost[hh.HostID] = hh
	}
	reads := func(hh compare.HostHistory) compare.HistorySeries {
		for _, s := range hh.Series {
			if s.Step == "reads" {
				return s
			}
		}
		t.Fatalf("host %s: no reads series in %+v", hh.HostID, hh.Series)
		return compare.HistorySeries{}
	}
	if len(h.Hosts) != 2 || byHost[idA].History == nil || byHost[idB].History == nil {
		t.Fatalf("history of %d hosts: %+v", len(h.Hosts), h.Hosts)
	}
	a, b := reads(byHost[idA]), reads(byHost[idB])
	if len(a.Points) != 6 || len(b.Points) != 7 {
		t.Fatalf("reads: %d points on host A, %d on host B, want 6 and 7", len(a.Points), len(b.Points))
	}
	for i, p := range b.Points {
		if (p.Value == nil) != (i == 3) || p.Value != nil && math.Abs(*p.Value-400) > 40 {
			t.Errorf("host B run %d: reads %v ops/s, want about 400, and no value in run 4", p.Run, p.Value)
		}
	}
	for i, p := range a.Points {
		want := 400.0
		if i >= 3 {
			want = 200
		}
		if p.Value == nil || math.Abs(*p.Value-want) > 0.1*want {
			t.Errorf("host A run %d: reads %v ops/s, want about %g", p.Run, p.Value, want)
		}
	}
	if len(a.Changes) != 1 || a.Changes[0].Run != 4 || a.Changes[0].Kind != "regression" || a.Changes[0].ChangePct > -30 {
		t.Errorf("host A: change points %+v, want one regression of about -50%% at run 4", a.Changes)
	} else {
		t.Logf("host A: reads %.1f -> %.1f ops/s (%+.1f%%, p %.2g) at run 4", a.Changes[0].Before, a.Changes[0].After, a.Changes[0].ChangePct, a.Changes[0].P)
	}
	if len(b.Changes) != 0 {
		t.Errorf("host B: change points %+v, want none", b.Changes)
	}

	// --host: one host; the terminal says it per host.
	r = runCLI(t, nil, "history", "pb", "--results", uri, "--results-db", "fleet", "--host", idB)
	if r.code != 0 || strings.Count(r.stdout, "== host ") != 1 || !strings.Contains(r.stdout, "(id "+idB+")\n") ||
		!strings.Contains(r.stdout, "ops/s of pb on 1 host") || !strings.Contains(r.stdout, "  no change point\n") {
		t.Errorf("wtd history --results --host %s: %d\n%s%s", idB, r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "history", "pb", "--results", uri, "--results-db", "fleet")
	if r.code != 0 || strings.Count(r.stdout, "== host ") != 2 || !strings.Contains(r.stdout, "  regression at run 4: ") {
		t.Errorf("wtd history --results: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "history", "pb", "--results", uri, "--results-db", "fleet", "--host", "nohost"); r.code != 2 || !strings.Contains(r.stderr, "no ok run of playbook pb of host nohost") {
		t.Errorf("wtd history --host of a host with no run: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "--db", dbA, "history", "pb", "--host", idB); r.code != 2 {
		t.Errorf("wtd history --host without --results: %d, want 2", r.code)
	}

	// compare across hosts: host A's run 6 (200 ops/s) against host B's
	// run 6 (400).
	keyA, keyB := idB+":6", idA+":6"
	r = runCLI(t, nil, "compare", keyA, keyB, "--results", uri, "--results-db", "fleet", "--json")
	if r.code != 0 {
		t.Fatalf("wtd compare --results: %d\n%s", r.code, r.stderr)
	}
	var res []compare.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res) != 1 {
		t.Fatalf("wtd compare --results --json: %v\n%s", err, r.stdout)
	}
	c := res[0]
	if c.A.Key != keyA || c.B.Key != keyB || !c.Comparable {
		t.Errorf("compare %s %s: A %+v B %+v comparable %v %v", keyA, keyB, c.A, c.B, c.Comparable, c.Reasons)
	}
	var readsOps *compare.MeasureRow
	for _, s := range c.Steps {
		for i, m := range s.Measures {
			if s.Step == "reads" && m.Measure == "ops/s" {
				readsOps = &s.Measures[i]
			}
		}
	}
	if readsOps == nil || readsOps.Verdict != compare.Slower || readsOps.NA < 3 || readsOps.NB < 3 || readsOps.ChangePct == nil || *readsOps.ChangePct > -30 {
		t.Errorf("compare %s %s: reads ops/s %+v, want slower by about 50%% from per-second values", keyA, keyB, readsOps)
	} else {
		t.Logf("compare %s %s: reads ops/s %.1f -> %.1f (%+.1f%%), %s, n %d+%d", keyA, keyB, *readsOps.A, *readsOps.B, *readsOps.ChangePct, readsOps.Verdict, readsOps.NA, readsOps.NB)
	}
	// The same runs compared from the hosts' own databases: the same
	// figures (the central copy loses nothing compare uses).
	local := compareLocal(t, dbB, dbA)
	if local == nil || readsOps == nil {
		t.Errorf("reads ops/s compared from the hosts' databases %+v, from the results store %+v", local, readsOps)
	} else if d := cmp.Diff(*local, *readsOps); d != "" {
		t.Errorf("reads ops/s compared from the hosts' databases and from the results store differ (-hosts +store):\n%s", d)
	}
	r = runCLI(t, nil, "compare", keyA, keyB, "--results", uri, "--results-db", "fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "run "+keyB+" (") || !strings.Contains(r.stdout, "compared with run "+keyA+" (") {
		t.Errorf("wtd compare --results: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "compare", keyA, idA+":99", "--results", uri, "--results-db", "fleet"); r.code != 2 || !strings.Contains(r.stderr, "no such run in the results store") {
		t.Errorf("wtd compare of a run the store lacks: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "compare", keyA+"@reads", keyB+"@reads", "--results", uri, "--results-db", "fleet", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"verdict": "slower"`) {
		t.Errorf("wtd compare HOST:RUN@STEP --results: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// --baseline HOST:RUN: the run against its host's previous ok run of
	// the playbook in the store, as --baseline RUN on the host itself.
	compared := func(what string, r cliResult) *compare.Result {
		t.Helper()
		var res []compare.Result
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || len(res) != 1 {
			t.Fatalf("%s: %d\n%s%s", what, r.code, r.stdout, r.stderr)
		}
		return &res[0]
	}
	// The steps' measures and verdicts (not the words naming the runs).
	measures := func(r *compare.Result) map[string][]compare.MeasureRow {
		out := map[string][]compare.MeasureRow{}
		for _, s := range r.Steps {
			out[s.Step+" "+s.Verdict] = s.Measures
		}
		return out
	}
	central := compared("wtd compare --baseline "+idA+":4 --results", runCLI(t, nil, "compare", "--baseline", idA+":4", "--results", uri, "--results-db", "fleet", "--json"))
	hostOwn := compared("wtd compare --baseline 4 on host A", runCLI(t, nil, "--db", dbA, "compare", "--baseline", "4", "--json"))
	if central.A.Key != idA+":3" || central.B.Key != idA+":4" || !central.Comparable || hostOwn.A.ID != 3 {
		t.Errorf("--baseline %s:4 --results: compared %+v with %+v (comparable %v), the host's own --baseline 4 with run %d", idA, central.B, central.A, central.Comparable, hostOwn.A.ID)
	}
	if d := cmp.Diff(measures(hostOwn), measures(central)); d != "" {
		t.Errorf("--baseline 4 on host A and --baseline %s:4 --results differ (-host +store):\n%s", idA, d)
	}
	readsOps = nil
	for _, s := range central.Steps {
		for i, m := range s.Measures {
			if s.Step == "reads" && m.Measure == "ops/s" {
				readsOps = &s.Measures[i]
			}
		}
	}
	if readsOps == nil || readsOps.Verdict != compare.Slower || readsOps.ChangePct == nil || *readsOps.ChangePct > -30 {
		t.Errorf("--baseline %s:4 --results: reads ops/s %+v, want slower by about 50%%", idA, readsOps)
	}
	// Host B's run 5 has for baseline its run 4, which read nothing, in the
	// store as on the host; $WTD_RESULTS alone sends a HOST:RUN there.
	central = compared("wtd compare --baseline "+idB+":5", runCLI(t, map[string]string{"WTD_RESULTS": uri}, "compare", "--baseline", idB+":5", "--results-db", "fleet", "--json"))
	hostOwn = compared("wtd compare --baseline 5 on host B", runCLI(t, nil, "--db", dbB, "compare", "--baseline", "5", "--json"))
	if central.A.Key != idB+":4" || hostOwn.A.ID != 4 {
		t.Errorf("--baseline %s:5: compared with %+v, the host's own --baseline 5 with run %d", idB, central.A, hostOwn.A.ID)
	} else if d := cmp.Diff(measures(hostOwn), measures(central)); d != "" {
		t.Errorf("--baseline 5 on host B and --baseline %s:5 --results differ (-host +store):\n%s", idB, d)
	}
	r = runCLI(t, nil, "compare", "--baseline", idA+":4", "--results", uri, "--results-db", "fleet")
	if r.code != 0 || !strings.Contains(r.stdout, "run "+idA+":4 (") || !strings.Contains(r.stdout, "compared with run "+idA+":3 (") || !strings.Contains(r.stdout, "verdict: slower") {
		t.Errorf("wtd compare --baseline %s:4 --results: %d\n%s%s", idA, r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "compare", "--baseline", idA+":1", "--results", uri, "--results-db", "fleet"); r.code != 2 || !strings.Contains(r.stderr, "no earlier ok run of pb on host "+idA) {
		t.Errorf("wtd compare --baseline of a host's first run: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "compare", "--baseline", idA+":99", "--results", uri, "--results-db", "fleet"); r.code != 2 || !strings.Contains(r.stderr, "no such run in the results store") {
		t.Errorf("wtd compare --baseline of a run the store lacks: %d %s", r.code, r.stderr)
	}

	// The dashboard's fleet pages: both hosts' history, host A's change
	// point marked at its run 4, host B's run 4 without a value, and the
	// comparison.
	ctx := context.Background()
	st, err := store.Open(ctx, dbA)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	srv := httptest.NewServer(web.New(web.Options{Store: st, Results: fleet.Config{URI: uri, Database: "fleet"}}))
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/fleet"); code != 200 || !strings.Contains(body, `<a href="/fleet/history?playbook=pb"`) || !strings.Contains(body, `action="/fleet/compare"`) {
		t.Errorf("the fleet page links no history or compare: %d\n%s", code, body)
	}
	code, body := get("/fleet/history?playbook=pb")
	if code != 200 || strings.Count(body, `<h2 class="fleet-host">`) != 2 || !strings.Contains(body, "<code>"+idA+"</code>") || !strings.Contains(body, "<code>"+idB+"</code>") ||
		strings.Count(body, `class="num change-regression" title="regression from this run on"`) != 1 || !strings.Contains(body, "regression at run 4: -") ||
		!strings.Contains(body, "<th><code>"+idA+":4</code></th>") {
		t.Errorf("the fleet history page: %d\n%s", code, body)
	}
	if code, body := get("/fleet/history?playbook=pb&host=" + idB); code != 200 || strings.Count(body, `<h2 class="fleet-host">`) != 1 || strings.Contains(body, `class="num change-`) ||
		!strings.Contains(body, "<td>reads</td>") || !strings.Contains(body, `<td class="num">–</td>`) || strings.Count(body, `<div class="chart">`) != 2 {
		t.Errorf("the fleet history page of host B: %d\n%s", code, body)
	}
	code, body = get("/fleet/compare?a=" + keyA + "&b=" + keyB)
	if code != 200 || !strings.Contains(body, "Run "+keyB+" compared with run "+keyA) || !strings.Contains(body, "slower") {
		t.Errorf("the fleet compare page: %d\n%s", code, body)
	}
	if code, body := get("/fleet/compare?a=" + keyA + "&b=" + idA + ":99"); code != 404 || !strings.Contains(body, "no such run in the results store") {
		t.Errorf("the fleet compare page of a run the store lacks: %d\n%s", code, body)
	}

	t.Run("chart in Chromium", func(t *testing.T) {
		fleetHistoryInBrowser(t, srv.URL, fleetHost{idA, byHost[idA].Host}, fleetHost{idB, byHost[idB].Host})
	})
}

type fleetHost struct{ id, name string }

// evalJS evaluates js in the browser tab ctx.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// fleetHistoryInBrowser opens /fleet/history?playbook=pb of fleetTwoHosts'
// runs in headless Chromium: no console error, no exception, no request
// beyond the daemon; a chart for each step (load, reads) with pixels in
// each host's line colour and a legend naming both hosts (name and id);
// in the page's data, reads marked once, a regression on host A at its
// fourth run, and host B's fourth run null; the regression's red drawn on
// the reads chart. A screenshot is kept (see testbrowser.ArtifactDir).
func fleetHistoryInBrowser(t *testing.T, base string, a, b fleetHost) {
	exe := testbrowser.Chromium(t)
	if a.name == "" || b.name == "" {
		t.Fatalf("hosts without names: %+v %+v", a, b)
	}
	bctx, cancel := chromedp.NewContext(testbrowser.Allocator(t, exe))
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	problems, err := testbrowser.Watch(bctx, func(u string) bool { return strings.HasPrefix(u, base+"/") || strings.HasPrefix(u, "data:") })
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/fleet/history?playbook=pb"), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool]("window.wtdCharts && window.wtdCharts.length === 2", chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("charts not drawn: %v (problems: %v)", err, problems.List())
	}
	testbrowser.Screenshot(t, bctx, "fleet-history")
	titles := evalJS[[]string](t, bctx, `Array.from(document.querySelectorAll(".chart h3")).map(h => h.innerText)`)
	legends := evalJS[[][]string](t, bctx, `Array.from(document.querySelectorAll(".chart")).map(c => Array.from(c.querySelectorAll(".u-legend .u-series .u-label")).map(l => l.innerText))`)
	raw := evalJS[string](t, bctx, `document.getElementById("wtd-data").textContent`)
	var data struct {
		Charts []struct {
			ID   string
			Runs []struct {
				X       []float64
				Labels  []string
				Colours []string
				Y       [][]*float64
			}
			Marks []struct {
				Run  int
				Kind string
				X    float64
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		t.Fatalf("the page's data: %v\n%s", err, raw)
	}
	if len(titles) != 2 || titles[0] != "load (ops/s)" || titles[1] != "reads (ops/s)" || len(data.Charts) != 2 {
		t.Fatalf("charts %q, %d in the data", titles, len(data.Charts))
	}
	labelA, labelB := report.HostLabel(a.name, a.id), report.HostLabel(b.name, b.id)
	for i, l := range legends {
		if len(l) != 3 || !slices.Contains(l, labelA) || !slices.Contains(l, labelB) {
			t.Errorf("chart %s: legend %q, want the x axis, %q and %q", titles[i], l, labelA, labelB)
		}
	}
	reads := data.Charts[1]
	hostA, hostB := -1, -1
	for i, r := range reads.Runs {
		switch {
		case len(r.Labels) == 1 && r.Labels[0] == labelA:
			hostA = i
		case len(r.Labels) == 1 && r.Labels[0] == labelB:
			hostB = i
		}
	}
	if hostA < 0 || hostB < 0 || len(reads.Runs) != 2 {
		t.Fatalf("reads chart's lines: %+v", reads.Runs)
	}
	ra, rb := reads.Runs[hostA], reads.Runs[hostB]
	if len(reads.Marks) != 1 || reads.Marks[0].Run != hostA || reads.Marks[0].Kind != "regression" || len(ra.X) != 6 || reads.Marks[0].X != ra.X[3] {
		t.Errorf("reads chart's marks %+v, want one regression on host A at its fourth run (x %v)", reads.Marks, ra.X)
	}
	if len(rb.Y) != 1 || len(rb.Y[0]) != 7 || rb.Y[0][3] != nil || rb.Y[0][2] == nil || rb.Y[0][4] == nil || !strings.Contains(raw, ",null,") {
		t.Errorf("host B's reads in the page's data: %s", raw)
	}
	const red = "#bb0000" // charts.js's regression mark
	pixels := evalJS[[][]int](t, bctx, testbrowser.ColourPixels(ra.Colours[0], rb.Colours[0], red))
	if ra.Colours[0] == rb.Colours[0] || len(pixels) != 2 {
		t.Fatalf("colours %s and %s, pixels %v", ra.Colours[0], rb.Colours[0], pixels)
	}
	for i, p := range pixels {
		if p[0] < 20 || p[1] < 20 {
			t.Errorf("chart %s: %d pixels in host A's colour %s, %d in host B's %s", titles[i], p[0], ra.Colours[0], p[1], rb.Colours[0])
		}
	}
	if pixels[1][2] < 20 {
		t.Errorf("reads chart: %d pixels in the regression's red", pixels[1][2])
	}
	t.Logf("pixels (host A, host B, red) per chart: %v", pixels)
	for _, p := range problems.List() {
		t.Error(p)
	}
}

// TestResultsVariableLeavesLocalReadsLocal: $WTD_RESULTS, set for pushing,
// does not send wtd show 1, wtd compare 1 2 or wtd runs to the results
// store (here one that is not there): they read this host's database.
func TestResultsVariableLeavesLocalReadsLocal(t *testing.T) {
	t.Parallel()
	fx := recordedRuns(t)
	env := map[string]string{"WTD_RESULTS": "mongodb://127.0.0.1:1/"}
	for _, args := range [][]string{{"show", "1"}, {"compare", "1", "2"}, {"runs"}, {"show", "latest"}} {
		res := runCLI(t, env, append(args, "--db", fx.db)...)
		if res.code != 0 {
			t.Errorf("wtd %v with $WTD_RESULTS set: %d\n%s", args, res.code, res.stderr)
		}
	}
	// A run of the store's is looked for there.
	if res := runCLI(t, env, "show", "--db", fx.db, "db1:1"); res.code == 0 {
		t.Errorf("wtd show db1:1 read a run from nowhere:\n%s", res.stdout)
	}
}
