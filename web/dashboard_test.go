package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/internal/testruns"
	"wtd/schedule"
)

// playbook is a small real experiment: a load, then reads and updates
// for a fixed time in two rounds with a restart between them.
const playbook = `
local p = params{ docs = 2000, seconds = 3 }
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 500 } end }
for round = 1, 2 do
  if round == 2 then m:restart{} end
  step{ name = "mixed", round = round, run = function()
    return m:workload{ ns = "t.c", duration = p.seconds, mix = { read = 3, update = 1 }, doc_bytes = 500 }
  end }
end
report.table{ title = "dashboard test" }
`

var (
	recordOnce sync.Once
	recordDir  string
	recordedDB string
)

// TestMain removes the recorded runs at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	if recordDir != "" {
		os.RemoveAll(recordDir)
	}
	os.Exit(code)
}

// recorded returns a database with a run of playbook by wtd run on
// minimongod (run 1) and a copy of it twice as slow in every second of its
// workloads (run 2, testruns.Slower), which ended as a schedule's run with
// its verdict against run 1, recorded as the daemon records it. Run 2 is
// slower in ops/s in "mixed, all rounds" (the rounds together: at least
// four full seconds a side, all lower); a round alone has at most three
// full seconds a side, too few for a difference at 0.05, and the load one
// value.
func recorded(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	recordOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-web-test-")
		if err != nil {
			t.Fatal(err)
		}
		recordDir = dir
		db := testbin.RecordRuns(t, dir, playbook, nil)
		st, err := store.OpenExisting(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close(ctx)
		slow := testruns.Slower(t, st, 1, 2)
		v, err := compare.VerdictOf(ctx, st, slow, compare.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddScheduleEvent(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: "a", Event: "fire", RunID: slow,
			Attrs: map[string]any{"trigger": "schedule a"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddScheduleEvent(ctx, store.ScheduleEvent{Kind: store.KindSchedule, Name: "a", Event: "end", RunID: slow,
			Attrs: map[string]any{"status": "ok", "trigger": "schedule a", record.VerdictAttr: v}}); err != nil {
			t.Fatal(err)
		}
		recordedDB = db
	})
	if recordedDB == "" {
		t.Fatal("no recorded runs (the first test to make them failed)")
	}
	st, err := store.OpenExisting(ctx, recordedDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	return st
}

// dashScheduler is a scheduler with schedule "a", its next fires, and a
// window open until 02:00 whose last transition failed.
type dashScheduler struct{ fakeScheduler }

func (dashScheduler) Status(int) ([]schedule.ScheduleStatus, []schedule.WindowStatus) {
	next := time.Date(2030, 1, 16, 1, 0, 0, 0, time.UTC)
	closes := time.Date(2030, 1, 16, 2, 0, 0, 0, time.Local)
	return []schedule.ScheduleStatus{{Name: "a", Cron: "@daily", Playbook: "/etc/wtd/playbook.lua", Params: map[string]any{"docs": 2000.0},
			Next: []time.Time{next, next.Add(24 * time.Hour)}}},
		[]schedule.WindowStatus{{Name: "offpeak", Cron: "0 1 * * *", Duration: "1h0m0s", Server: "mongodb://127.0.0.1:27017",
			Next: []time.Time{next}, Open: true, Wanted: true, ClosesAt: &closes, Failing: true, Failures: 2, Error: "connection refused"}}
}

func serve(t *testing.T, st *store.Store) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Options{Store: st, Scheduler: dashScheduler{}}))
	t.Cleanup(srv.Close)
	return srv
}

// get returns the status and body of a GET, and checks that an HTML page
// says so.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") && !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET %s: content type %q", url, ct)
	}
	return resp.StatusCode, string(b)
}

var runRowRE = regexp.MustCompile(`<tr class="run">.*?href="/runs/(\d+)".*?</tr>`)

// rowsOf returns the run ids the runs list shows, in order.
func rowsOf(body string) []string {
	var ids []string
	for _, m := range runRowRE.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// TestDashboardPages: the runs list (filters, trigger and verdict
// columns), a run's page (the report, with the verdict and links), the
// compare page (two runs, ticked runs, a baseline) and the schedules
// page, on a run a real playbook recorded on minimongod and its copy twice
// as slow: each page shows the verdict that copy must get, slower.
func TestDashboardPages(t *testing.T) {
	st := recorded(t)
	srv := serve(t, st)

	code, body := get(t, srv.URL+"/")
	if code != 200 || fmt.Sprint(rowsOf(body)) != "[2 1]" {
		t.Fatalf("runs list: %d, rows %v\n%s", code, rowsOf(body), body)
	}
	row2 := runRowRE.FindAllString(body, -1)[0]
	const want = `<a class="v-slower" href="/compare?a=1&amp;b=2" title="`
	if !strings.Contains(row2, want) || !strings.Contains(row2, ">slower</a>") || !strings.Contains(row2, "<td>cli</td>") {
		t.Errorf("run 2's row lacks its trigger or its verdict slower (%s):\n%s", want, row2)
	}
	if row1 := runRowRE.FindAllString(body, -1)[1]; !strings.Contains(row1, `<td class="verdict">–</td>`) {
		t.Errorf("run 1 has no recorded verdict, yet its row says:\n%s", row1)
	}
	for _, tc := range []struct{ query, rows string }{
		{"?status=ok", "[2 1]"},
		{"?status=failed", "[]"},
		{"?playbook=playbook", "[2 1]"},
		{"?playbook=other", "[]"},
		{"?before=2", "[1]"},
		{"?trigger=cli", "[2 1]"},
		{"?trigger=schedule+a", "[]"},
	} {
		code, body := get(t, srv.URL+"/"+tc.query)
		if got := fmt.Sprint(rowsOf(body)); code != 200 || got != tc.rows {
			t.Errorf("runs list %s: %d, rows %s, want %s", tc.query, code, got, tc.rows)
		}
		if tc.rows == "[]" && !strings.Contains(body, "No runs match") {
			t.Errorf("runs list %s: no word that nothing matches", tc.query)
		}
	}
	if code, body := get(t, srv.URL+"/?status=sleeping"); code != 400 || !strings.Contains(body, "want running, ok") {
		t.Errorf("bad status: %d\n%s", code, body)
	}

	code, body = get(t, srv.URL+"/runs/2")
	if code != 200 || !strings.Contains(body, `id="wtd-data"`) || !strings.Contains(body, `<a href="/schedules"`) ||
		!strings.Contains(body, `regression verdict: <a class="v-slower" href="/compare?a=1&amp;b=2"`) ||
		!strings.Contains(body, `against run <a href="/runs/1">1</a>; mixed, all rounds <span class="v-slower">slower</span> (-`) ||
		!strings.Contains(body, "Summary table: dashboard test") {
		t.Errorf("run page 2: %d\n%.3000s", code, body)
	}
	for _, bad := range []string{`src="http`, `href="http`, "<link", "@import", "fetch(", "XMLHttpRequest", `src="/`} {
		if strings.Contains(body, bad) {
			t.Errorf("run page fetches something: it contains %q", bad)
		}
	}
	if code, body = get(t, srv.URL+"/runs/1"); code != 200 || !strings.Contains(body, `href="/compare?baseline=1"`) {
		t.Errorf("run page 1 (no recorded verdict) has no link to its baseline comparison: %d", code)
	}
	if code, body = get(t, srv.URL+"/runs/9"); code != 404 || !strings.Contains(body, "no run 9") || !strings.Contains(body, "<nav") {
		t.Errorf("unknown run: %d\n%s", code, body)
	}

	for _, q := range []string{"?a=1&b=2", "?run=2&run=1", "?baseline=2"} {
		code, body = get(t, srv.URL+"/compare"+q)
		if code != 200 || !strings.Contains(body, "Run 2 compared with run 1") || !strings.Contains(body, "Comparable: same playbook") ||
			!strings.Contains(body, `<p class="verdict">verdict: <span class="v-slower">slower in ops/s: mixed, all rounds</span><br></p>`) ||
			!strings.Contains(body, "mixed (round=1)") ||
			!strings.Contains(body, "<td>ops/s</td>") {
			t.Errorf("compare %s: %d\n%s", q, code, body)
		}
	}
	// The rounds together have six full seconds a side at most: however
	// far apart, Mann-Whitney's p is 2/924 or more, above 0.001.
	if code, body := get(t, srv.URL+"/compare?a=1&b=2&alpha=0.001"); code != 200 ||
		!strings.Contains(body, `<p class="verdict">verdict: <span class="v-no-difference">no step is faster or slower in ops/s at alpha 0.001 by 5% or more</span><br></p>`) {
		t.Errorf("compare at alpha 0.001: %d\n%s", code, body)
	}
	for _, tc := range []struct {
		query string
		code  int
		want  string
	}{
		{"", 200, "Give two runs"},
		{"?a=1&b=9", 404, "no run 9"},
		{"?a=1&b=x", 400, "want a run id"},
		{"?run=1", 400, "tick two"},
		{"?baseline=1", 404, "no earlier ok run"},
		{"?a=1&b=2&alpha=2", 400, "alpha"},
	} {
		if code, body := get(t, srv.URL+"/compare"+tc.query); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("compare %q: %d, want %d and %q\n%s", tc.query, code, tc.code, tc.want, body)
		}
	}

	code, body = get(t, srv.URL+"/schedules")
	next := time.Date(2030, 1, 16, 1, 0, 0, 0, time.UTC)
	if code != 200 || !strings.Contains(body, `<tr class="schedule"><td>a</td><td><code>@daily</code>`) ||
		!strings.Contains(body, localTime(next)+"<br>"+localTime(next.Add(24*time.Hour))) || !strings.Contains(body, "docs=2000") ||
		!strings.Contains(body, `<tr class="window"><td>offpeak</td>`) ||
		!strings.Contains(body, `<td class="warn">open until 02:00:00, failing (2 attempts): connection refused</td>`) || !strings.Contains(body, `<td><a href="/runs/2">2</a></td><td><span class="status-ok">ok</span></td>`) ||
		!regexp.MustCompile(`<tr class="schedule">.*\n<td><a href="/runs/2">2</a> <span class="status-ok">ok</span><br>[^<]*</td>\n<td class="verdict"><a class="v-slower" href="/compare\?a=1&amp;b=2" title="[^"]*">slower</a>`).MatchString(body) {
		t.Errorf("schedules page: %d\n%s", code, body)
	}
}

// TestAPIRunsCarryTheirVerdict: GET /api/v1/runs and /api/v1/runs/{id}
// give the recorded verdict, with the baseline and the steps behind it,
// and null for a run without one.
func TestAPIRunsCarryTheirVerdict(t *testing.T) {
	st := recorded(t)
	srv := serve(t, st)
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/runs", nil)
	code, body := do(t, req)
	runs, _ := body["runs"].([]any)
	if code != 200 || len(runs) != 2 {
		t.Fatalf("runs: %d %v", code, body)
	}
	r2, r1 := runs[0].(map[string]any), runs[1].(map[string]any)
	got, _ := r2["verdict"].(map[string]any)
	if got == nil || got["verdict"] != "slower" || got["baseline"] != 1.0 || got["run"] != 2.0 || got["alpha"] != 0.05 || got["test"] != "mwu" ||
		fmt.Sprint(got["slower"]) != "[mixed, all rounds]" || got["faster"] != nil {
		t.Errorf("run 2's verdict: %v, want slower in mixed, all rounds against 1", r2["verdict"])
	}
	steps, _ := got["steps"].([]any)
	if len(steps) != 1 {
		t.Fatalf("run 2's verdict has steps %v, want mixed, all rounds", got["steps"])
	}
	if step := steps[0].(map[string]any); step["step"] != "mixed, all rounds" || step["verdict"] != "slower" || step["measure"] != "ops/s" ||
		step["change_pct"].(float64) > -50 || step["p"].(float64) >= 0.05 {
		t.Errorf("run 2's verdict step: %v, want mixed, all rounds slower by half or more in ops/s, p < 0.05", step)
	}
	if val, ok := r1["verdict"]; !ok || val != nil {
		t.Errorf("run 1's verdict: %v (present %v), want null", val, ok)
	}
	req, _ = http.NewRequest("GET", srv.URL+"/api/v1/schedules", nil)
	_, body = do(t, req)
	if sched, _ := body["schedules"].([]any); len(sched) != 1 ||
		fmt.Sprint(sched[0].(map[string]any)["last_run"].(map[string]any)["verdict"].(map[string]any)["verdict"]) != "slower" {
		t.Errorf("GET /api/v1/schedules: %v", body["schedules"])
	}
	req, _ = http.NewRequest("GET", srv.URL+"/api/v1/runs/2", nil)
	code, body = do(t, req)
	run, _ := body["run"].(map[string]any)
	if got, _ := run["verdict"].(map[string]any); code != 200 || got == nil || got["verdict"] != "slower" || got["baseline"] != 1.0 {
		t.Errorf("GET /api/v1/runs/2: %d, verdict %v", code, run["verdict"])
	}
}

// TestDashboardWithNoRunsAndMany: an empty database gives an empty list
// that says so; 120 runs are listed 50 a page, newest first, with links
// to the older pages and back.
func TestDashboardWithNoRunsAndMany(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	srv := serve(t, st)
	for _, path := range []string{"/", "/schedules", "/compare"} {
		if code, body := get(t, srv.URL+path); code != 200 || strings.Contains(body, `<tr class="run">`) {
			t.Errorf("empty %s: %d\n%s", path, code, body)
		}
	}
	if _, body := get(t, srv.URL+"/"); !strings.Contains(body, "No runs recorded yet") {
		t.Errorf("the empty list does not say so:\n%s", body)
	}
	if code, body := get(t, srv.URL+"/fleet"); code != 200 || !strings.Contains(body, "No central results store is configured") {
		t.Errorf("the fleet page without a results store: %d\n%s", code, body)
	}
	start := time.Unix(1700000000, 0)
	for i := range 120 {
		id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: fmt.Sprintf("p%d.lua", i%3), Playbook: "-- x", StartedAt: start.Add(time.Duration(i) * time.Minute),
			Params: map[string]any{"n": float64(i % 2)}, Trigger: "schedule s"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, store.StatusOK, "", start.Add(time.Duration(i)*time.Minute+30*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	url, pages, total := srv.URL+"/", 0, 0
	last := ""
	for url != "" {
		code, body := get(t, url)
		rows := rowsOf(body)
		if code != 200 || len(rows) == 0 || len(rows) > dashboardRuns {
			t.Fatalf("page %s: %d, %d rows", url, code, len(rows))
		}
		if pages == 0 && rows[0] != "120" || pages > 0 && !strings.Contains(body, `<a href="/">newest runs</a>`) {
			t.Errorf("page %d starts with run %s", pages, rows[0])
		}
		pages, total, last = pages+1, total+len(rows), rows[len(rows)-1]
		url = ""
		if m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(body); m != nil {
			url = srv.URL + strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if pages != 3 || total != 120 || last != "1" {
		t.Errorf("%d pages, %d runs, last %s; want 3, 120, 1", pages, total, last)
	}
	if _, body := get(t, srv.URL+"/?playbook=p1.lua&status=ok"); len(rowsOf(body)) != 40 || !strings.Contains(body, `<option value="p1.lua" selected>`) {
		t.Errorf("p1.lua: %d rows", len(rowsOf(body)))
	}
}
