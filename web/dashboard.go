package web

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/report"
)

// The dashboard: server-rendered pages (html/template), nothing fetched
// from elsewhere, no script but the charts of a run report and of the
// fleet history (report.ChartsHTML).
//
//	GET /                 runs, newest first (?playbook= &status= &trigger= &before=ID)
//	GET /runs/{id}        a run's report, as wtd report writes it, with its verdict
//	GET /schedules        schedules, windows and the daemon's history
//	GET /compare          ?a=&b= (or ?run=&run=, or ?baseline=ID) [&alpha= &test= &force=1]

//go:embed dashboard.html.tmpl
var dashboardTemplate string

var dash = template.Must(template.New("dash").Funcs(template.FuncMap{
	"vclass": func(v string) string { return strings.ReplaceAll(v, " ", "-") },
	"vtitle": verdictTitle,
	"pct":    func(p *float64) string { return fmt.Sprintf("%+.1f%%", *p) },
}).Parse(dashboardTemplate))

// dashboardRuns is how many runs a page of the runs list shows.
const dashboardRuns = 50

// page is what every dashboard page has.
type page struct {
	Title string
	Style template.CSS
	Nav   string // runs, schedules, compare or fleet
}

func newPage(title, nav string) page { return page{Title: title, Style: dashboardStyle, Nav: nav} }

var dashboardStyle = report.Style() + template.CSS(`
form.filter { display: flex; gap: 1em; flex-wrap: wrap; align-items: center; margin: 0 0 1em; }
tr.run:hover, tr.schedule:hover { background: #f7f9fc; }
p.empty { color: #555; }
td.change-regression { border-left: 3px solid #b00; }
td.change-improvement { border-left: 3px solid #070; }
td.change-change { border-left: 3px solid #a60; }
span.host-colour { display: inline-block; width: 1.5em; height: .3em; vertical-align: middle; margin-right: .5em; }
footer.api { margin-top: 2em; color: #666; font-size: 12px; border-top: 1px solid #eee; }
`)

// registerDashboard adds the dashboard's pages.
func (s *Server) registerDashboard() {
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /runs/{id}", s.runPage)
	s.mux.HandleFunc("GET /schedules", s.schedulesPage)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /fleet", s.fleetPage)
	s.mux.HandleFunc("GET /fleet/history", s.fleetHistoryPage)
	s.mux.HandleFunc("GET /fleet/compare", s.fleetComparePage)
	// Browsers ask for an icon; there is none.
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
}

// render executes the named template as the response.
func render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := dash.ExecuteTemplate(&b, name, data); err != nil {
		b.Reset()
		status = http.StatusInternalServerError
		dash.ExecuteTemplate(&b, "error", errorPage{newPage("Error", ""), "render " + name + ": " + err.Error()})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

type errorPage struct {
	page
	Error string
}

func htmlError(w http.ResponseWriter, status int, msg string) {
	render(w, status, "error", errorPage{newPage(http.StatusText(status), ""), msg})
}

func verdictTitle(v *compare.RunVerdict) string {
	if v == nil {
		return ""
	}
	var parts []string
	switch {
	case len(v.History) > 0:
		parts = append(parts, fmt.Sprintf("against the median of the last %d comparable runs", len(v.History)))
	case v.Baseline > 0:
		parts = append(parts, fmt.Sprintf("against run %d", v.Baseline))
	}
	for _, s := range v.Steps {
		p := s.Step + ": " + s.Verdict
		if s.ChangePct != nil {
			p += fmt.Sprintf(" (%+.1f%% %s)", *s.ChangePct, s.Measure)
		}
		parts = append(parts, p)
	}
	parts = append(parts, v.Reasons...)
	for _, b := range v.HostBusy {
		parts = append(parts, "host busy during "+b+": verdict not reliable")
	}
	return strings.Join(parts, "; ")
}

func localTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

type runRow struct {
	ID                                                   int64
	Playbook, Params, Trigger, Started, Duration, Status string
	Reason                                               string
	Verdict                                              *compare.RunVerdict
	// Pushed is its push to the central results store: yes, waiting (n
	// failed), or – when never queued.
	Pushed, PushTitle string
}

type runsPage struct {
	page
	Playbook, Status, Trigger string
	Before                    int64
	Playbooks, Statuses       []string
	Runs                      []runRow
	Newer, Older              string
	// Pushes is true when a run listed was queued to be pushed: the
	// table then has a pushed column.
	Pushes bool
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st := s.opts.Store
	q := r.URL.Query()
	p := runsPage{page: newPage("Runs", "runs"), Playbook: q.Get("playbook"), Status: q.Get("status"), Trigger: q.Get("trigger"),
		Statuses: []string{store.StatusRunning, store.StatusOK, store.StatusFailed, store.StatusAborted}}
	if p.Status != "" && !slices.Contains(p.Statuses, p.Status) {
		htmlError(w, http.StatusBadRequest, fmt.Sprintf("status %q: want running, ok, failed or aborted", p.Status))
		return
	}
	if b := q.Get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 1 {
			htmlError(w, http.StatusBadRequest, fmt.Sprintf("before %q: want a run id", b))
			return
		}
		p.Before = n
	}
	var err error
	if p.Playbooks, err = st.Playbooks(ctx); err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if p.Playbook != "" && !slices.Contains(p.Playbooks, p.Playbook) {
		p.Playbooks = append(p.Playbooks, p.Playbook) // a short name typed in the URL
	}
	runs, err := st.FindRuns(ctx, store.RunFilter{Playbook: p.Playbook, Status: p.Status, Trigger: p.Trigger, Before: p.Before, Limit: dashboardRuns + 1})
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	more := len(runs) > dashboardRuns
	runs = runs[:min(len(runs), dashboardRuns)]
	ids := make([]int64, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	vs, err := verdicts(ctx, st, ids...)
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	pushes, err := st.Pushes(ctx, ids...)
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	p.Pushes = len(pushes) > 0
	for _, run := range runs {
		end := run.EndedAt
		if end.IsZero() {
			end = time.Now() // the time it has gone so far
		}
		row := runRow{ID: run.ID, Playbook: run.PlaybookPath, Params: record.ParamsShort(run.Params), Trigger: run.Trigger,
			Started: localTime(run.StartedAt), Duration: end.Sub(run.StartedAt).Round(time.Second).String(),
			Status: run.Status, Reason: run.Reason, Verdict: vs[run.ID], Pushed: "–"}
		if push, ok := pushes[run.ID]; ok {
			row.Pushed, row.PushTitle = pushedText(push)
		}
		p.Runs = append(p.Runs, row)
	}
	link := func(before int64) string {
		v := url.Values{}
		for k, val := range map[string]string{"playbook": p.Playbook, "status": p.Status, "trigger": p.Trigger} {
			if val != "" {
				v.Set(k, val)
			}
		}
		if before > 0 {
			v.Set("before", strconv.FormatInt(before, 10))
		}
		if len(v) == 0 {
			return "/"
		}
		return "/?" + v.Encode()
	}
	if more {
		p.Older = link(runs[len(runs)-1].ID)
	}
	if p.Before > 0 {
		p.Newer = link(0)
	}
	render(w, http.StatusOK, "runs", p)
}

type runHeader struct {
	ID      int64
	Verdict *compare.RunVerdict
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		htmlError(w, http.StatusBadRequest, fmt.Sprintf("run id %q: want a positive number", r.PathValue("id")))
		return
	}
	m, err := report.Load(ctx, s.opts.Store, id)
	if errors.Is(err, store.ErrNotFound) {
		htmlError(w, http.StatusNotFound, fmt.Sprintf("no run %d", id))
		return
	}
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	vs, err := verdicts(ctx, s.opts.Store, id)
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var head, body bytes.Buffer
	if err := dash.ExecuteTemplate(&head, "runheader", runHeader{ID: id, Verdict: vs[id]}); err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := m.WritePage(&body, report.PageOptions{Header: template.HTML(head.String())}); err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(body.Bytes())
}

type scheduleRow struct {
	ScheduleView
	NextText    []string
	ParamsText  string
	LastStarted string
	LastVerdict *compare.RunVerdict
}

type windowRow struct {
	WindowView
	NextText, State, LastText string
}

type historyRow struct {
	Time, Kind, Name, Event, Status, Detail string
	RunID                                   int64
	Verdict                                 *compare.RunVerdict
}

type schedulesPage struct {
	page
	Schedules []scheduleRow
	Windows   []windowRow
	History   []historyRow
}

// dashboardHistory is how many entries of the daemon's history the
// schedules page shows.
const dashboardHistory = 30

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, err := s.schedulesView(ctx)
	if err != nil {
		htmlError(w, http.StatusInternalServerError, err.Error())
		return
	}
	render(w, http.StatusOK, "schedules", p)
}

func (s *Server) schedulesView(ctx context.Context) (schedulesPage, error) {
	st := s.opts.Store
	p := schedulesPage{page: newPage("Schedules and windows", "schedules")}
	reply, err := s.schedules(ctx)
	if err != nil {
		return p, err
	}
	evs, err := st.ScheduleEvents(ctx, store.EventQuery{Limit: dashboardHistory})
	if err != nil {
		return p, err
	}
	var ids []int64
	for _, ev := range evs {
		if ev.Event == "end" && ev.RunID > 0 {
			ids = append(ids, ev.RunID)
		}
	}
	vs, err := verdicts(ctx, st, ids...)
	if err != nil {
		return p, err
	}
	for _, sc := range reply.Schedules {
		row := scheduleRow{ScheduleView: sc, ParamsText: record.ParamsShort(sc.Params)}
		for _, t := range sc.Next[:min(3, len(sc.Next))] {
			row.NextText = append(row.NextText, localTime(t))
		}
		if sc.LastRun != nil {
			row.LastStarted, row.LastVerdict = localTime(sc.LastRun.StartedAt), sc.LastRun.Verdict
		}
		p.Schedules = append(p.Schedules, row)
	}
	for _, win := range reply.Windows {
		row := windowRow{WindowView: win, NextText: first(win.Next), State: windowState(win)}
		if len(win.Recent) > 0 {
			ev := win.Recent[0]
			row.LastText = localTime(ev.TS) + " " + ev.Event
			if ev.Detail != "" {
				row.LastText += ": " + ev.Detail
			}
		}
		p.Windows = append(p.Windows, row)
	}
	for _, ev := range evs {
		row := historyRow{Time: localTime(ev.TS), Kind: ev.Kind, Name: ev.Name, Event: ev.Event, RunID: ev.RunID, Detail: ev.Detail}
		if status, ok := ev.Attrs["status"].(string); ok {
			row.Status = status
		}
		if ev.Event == "end" {
			row.Verdict = vs[ev.RunID]
		}
		p.History = append(p.History, row)
	}
	return p, nil
}

type comparePage struct {
	page
	A, B       string
	Alpha      string
	Test       string
	Force      bool
	Baseline   bool
	Error      string
	Comparison template.HTML
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	p := comparePage{page: newPage("Compare runs", "compare"), A: q.Get("a"), B: q.Get("b"), Alpha: q.Get("alpha"), Test: q.Get("test"),
		Force: q.Get("force") != ""}
	if picked := q["run"]; len(picked) > 0 {
		if len(picked) != 2 {
			p.Error = fmt.Sprintf("%d runs ticked: tick two", len(picked))
			render(w, http.StatusBadRequest, "compare", p)
			return
		}
		p.A, p.B = picked[0], picked[1]
		if a, _ := strconv.ParseInt(p.A, 10, 64); a > 0 {
			if b, _ := strconv.ParseInt(p.B, 10, 64); b > 0 && a > b {
				p.A, p.B = p.B, p.A // the older run is the baseline
			}
		}
	}
	opt := compare.Options{Force: p.Force, Test: p.Test}
	if p.Alpha == "" {
		p.Alpha = strconv.FormatFloat(compare.DefaultAlpha, 'g', -1, 64)
	}
	if p.Test == "" {
		p.Test, opt.Test = compare.TestMannWhitney, compare.TestMannWhitney
	}
	fail := func(status int, format string, args ...any) {
		p.Error = fmt.Sprintf(format, args...)
		render(w, status, "compare", p)
	}
	alpha, err := strconv.ParseFloat(p.Alpha, 64)
	if err != nil || !(alpha > 0 && alpha < 1) {
		fail(http.StatusBadRequest, "alpha %q: want a level between 0 and 1, such as 0.05", p.Alpha)
		return
	}
	opt.Alpha = alpha
	if opt.Test != compare.TestMannWhitney && opt.Test != compare.TestBootstrap {
		fail(http.StatusBadRequest, "test %q: want mwu or bootstrap", p.Test)
		return
	}
	runID := func(name, v string) (int64, bool) {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id < 1 {
			fail(http.StatusBadRequest, "run %s %q: want a run id", name, v)
			return 0, false
		}
		return id, true
	}
	var res *compare.Result
	switch {
	case q.Get("baseline") != "":
		id, ok := runID("", q.Get("baseline"))
		if !ok {
			return
		}
		p.B, p.Baseline = strconv.FormatInt(id, 10), true
		res, err = compare.Baseline(ctx, s.opts.Store, id, opt)
		if res != nil {
			p.A = strconv.FormatInt(res.A.ID, 10)
		}
	case p.A == "" && p.B == "":
		render(w, http.StatusOK, "compare", p)
		return
	default:
		a, ok := runID("A", p.A)
		if !ok {
			return
		}
		b, ok := runID("B", p.B)
		if !ok {
			return
		}
		for _, id := range []int64{a, b} {
			if _, err := s.opts.Store.GetRun(ctx, id); errors.Is(err, store.ErrNotFound) {
				fail(http.StatusNotFound, "no run %d", id)
				return
			}
		}
		res, err = compare.Runs(ctx, s.opts.Store, a, b, opt)
	}
	if errors.Is(err, store.ErrNotFound) {
		fail(http.StatusNotFound, "%v", err)
		return
	}
	if err != nil {
		fail(http.StatusInternalServerError, "%v", err)
		return
	}
	if p.Comparison, err = report.ComparisonHTML(res); err != nil {
		fail(http.StatusInternalServerError, "%v", err)
		return
	}
	render(w, http.StatusOK, "compare", p)
}

// pushedText is a run's push to the central results store in the runs
// table, and its title: where it went, or the last error.
func pushedText(p store.Push) (text, title string) {
	switch {
	case !p.Waiting():
		return "yes", "pushed " + localTime(p.PushedAt) + " to " + p.Dest
	case p.Attempts == 0:
		return "waiting", "queued " + localTime(p.QueuedAt)
	default:
		return fmt.Sprintf("waiting (%d failed)", p.Attempts), store.RedactURI(p.LastError)
	}
}
