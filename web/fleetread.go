package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/fleet"
	"wtd/report"
)

// fleetHistoryRow is one step of one host across its runs.
type fleetHistoryRow struct {
	Step  string
	Cells []fleetHistoryCell
	Note  string
	// Changes are the host's change points of the step, in words.
	Changes []string
}

// fleetHistoryCell is the step's value in one run; Change marks the
// first run after a change point.
type fleetHistoryCell struct {
	Value  string
	Change string // regression, improvement or change; "" none
}

// fleetHistoryHost is one host's history: its runs and its steps.
type fleetHistoryHost struct {
	Host, HostID string
	Colour       template.CSS // its line's in the charts
	Runs         []string     // the runs' keys, oldest first
	Params       string
	Skipped      int
	Rows         []fleetHistoryRow
}

type fleetHistoryPage struct {
	page
	Dest, Playbook, Host, Metric string
	Metrics                      []string
	Error                        string
	Alpha                        float64
	MinRuns                      int
	Hosts                        []fleetHistoryHost
	// Charts draw each step's history with a line per host.
	Charts template.HTML
}

// fleetHistoryPage is GET /fleet/history?playbook=P[&host=H][&metric=M]:
// a playbook's history across the hosts of the results store, as wtd
// history PLAYBOOK --results URI finds it: a chart per step with a line per
// host and the hosts' change points marked, then a table per host with
// each step's value in each run and the host's own change points.
func (s *Server) fleetHistoryPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := fleetHistoryPage{page: newPage("Fleet history", "fleet"), Playbook: q.Get("playbook"), Host: q.Get("host"),
		Metric: q.Get("metric"), Metrics: compare.MeasureNames}
	if p.Metric == "" {
		p.Metric = "ops/s"
	}
	cfg := s.opts.Results
	if cfg.URI == "" {
		render(w, http.StatusOK, "fleethistory", p)
		return
	}
	p.Dest = cfg.Dest()
	fail := func(status int, err error) {
		p.Error = err.Error()
		render(w, status, "fleethistory", p)
	}
	if p.Playbook == "" {
		fail(http.StatusBadRequest, errors.New("name a playbook (?playbook=NAME), as the fleet page links them"))
		return
	}
	if err := compare.CheckMeasures([]string{p.Metric}); err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), fleetTimeout)
	defer cancel()
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		fail(http.StatusBadGateway, err)
		return
	}
	defer sink.Close(context.WithoutCancel(ctx))
	hosts, err := sink.PlaybookRecords(ctx, p.Playbook, p.Host, fleetHistoryRuns)
	if err != nil {
		fail(http.StatusBadGateway, err)
		return
	}
	runs := make([]compare.HostRuns, len(hosts))
	for i, h := range hosts {
		runs[i] = compare.HostRuns{Host: h.Host, HostID: h.HostID, Runs: h.Records, Skipped: h.Skipped}
	}
	h, err := compare.BuildHostsHistory(fleet.PlaybookName(p.Playbook), runs, compare.HistoryOptions{Measure: p.Metric})
	if err != nil {
		fail(http.StatusBadRequest, err)
		return
	}
	p.Alpha, p.MinRuns = h.Alpha, h.MinRuns
	for i, hh := range h.Hosts {
		p.Hosts = append(p.Hosts, historyHost(hh, report.HostColours[i%len(report.HostColours)]))
	}
	if p.Charts, err = report.ChartsHTML(report.HistoryCharts(h)); err != nil {
		fail(http.StatusInternalServerError, err)
		return
	}
	render(w, http.StatusOK, "fleethistory", p)
}

// fleetHistoryRuns bounds the runs of each host a history page reads.
const fleetHistoryRuns = 100

// historyHost lays out one host's history as a table; colour is its
// line's in the charts.
func historyHost(hh compare.HostHistory, colour string) fleetHistoryHost {
	out := fleetHistoryHost{Host: hh.Host, HostID: hh.HostID, Colour: template.CSS(colour), Params: record.ParamsShort(hh.Params), Skipped: hh.Skipped}
	for _, r := range hh.Runs {
		out.Runs = append(out.Runs, r.Key)
	}
	for _, s := range hh.Series {
		row := fleetHistoryRow{Step: s.Step, Note: s.Note}
		at := map[int64]string{}
		for _, c := range s.Changes {
			at[c.Run] = c.Kind
			row.Changes = append(row.Changes, fmt.Sprintf("%s at run %d: %+.1f%% (%s -> %s, p %.2g)", c.Kind, c.Run, c.ChangePct,
				compare.FormatValue(&c.Before), compare.FormatValue(&c.After), c.P))
		}
		for _, pt := range s.Points {
			row.Cells = append(row.Cells, fleetHistoryCell{Value: compare.FormatValue(pt.Value), Change: at[pt.Run]})
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

type fleetComparePage struct {
	page
	Dest, A, B string
	Error      string
	Comparison template.HTML
}

// fleetComparePage is GET /fleet/compare?a=HOST:RUN&b=HOST:RUN: run b of
// the results store compared with run a, as wtd compare A B --results
// URI does.
func (s *Server) fleetComparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := fleetComparePage{page: newPage("Fleet compare", "fleet"), A: strings.TrimSpace(q.Get("a")), B: strings.TrimSpace(q.Get("b"))}
	cfg := s.opts.Results
	if cfg.URI == "" || (p.A == "" && p.B == "") {
		p.Dest = cfg.Dest()
		render(w, http.StatusOK, "fleetcompare", p)
		return
	}
	p.Dest = cfg.Dest()
	fail := func(status int, err error) {
		p.Error = err.Error()
		render(w, status, "fleetcompare", p)
	}
	opt := compare.Options{Force: q.Get("force") != ""}
	if v := q.Get("alpha"); v != "" {
		a, err := strconv.ParseFloat(v, 64)
		if err != nil || !(a > 0 && a < 1) {
			fail(http.StatusBadRequest, fmt.Errorf("alpha %q: want a level between 0 and 1, such as 0.05", v))
			return
		}
		opt.Alpha = a
	}
	ctx, cancel := context.WithTimeout(r.Context(), fleetTimeout)
	defer cancel()
	sink, err := fleet.Open(ctx, cfg)
	if err != nil {
		fail(http.StatusBadGateway, err)
		return
	}
	defer sink.Close(context.WithoutCancel(ctx))
	var recs []*record.Record
	for _, ref := range []string{p.A, p.B} {
		fr, err := sink.Find(ctx, ref)
		switch {
		case errors.Is(err, fleet.ErrNoRun):
			fail(http.StatusNotFound, err)
			return
		case err != nil && strings.Contains(err.Error(), "want HOST:RUN"):
			fail(http.StatusBadRequest, err)
			return
		case err != nil:
			fail(http.StatusBadGateway, err)
			return
		}
		rec, err := sink.Record(ctx, fr)
		if err != nil {
			fail(http.StatusBadGateway, err)
			return
		}
		recs = append(recs, rec)
	}
	if p.Comparison, err = report.ComparisonHTML(compare.Records(recs[0], recs[1], opt)); err != nil {
		fail(http.StatusInternalServerError, err)
		return
	}
	render(w, http.StatusOK, "fleetcompare", p)
}
