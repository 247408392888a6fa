package report

import (
	"fmt"
	"math"
	"strconv"

	"wtd/compare"
)

// HostColours are the colours of the hosts' lines in a history across
// hosts, in order (charts.js's palette without its red and green, which
// mark regressions and improvements); past six hosts they come again.
var HostColours = []string{blue, orange, purple, "#8c564b", "#e377c2", "#17becf"}

// HostLabel names a host in a chart's legend: its name and its id.
func HostLabel(host, hostID string) string {
	if host == "" {
		return hostID
	}
	return host + " (" + hostID + ")"
}

// HistoryCharts draws a playbook's history across hosts: a chart per step
// with a line per host (in HostColours, the host's order in h), the
// measure's value in each of the host's runs against the run's start, a
// run without a value a gap; the first run after each of a host's change
// points is marked.
func HistoryCharts(h *compare.HostsHistory) []Chart {
	var charts []Chart
	index := map[string]int{}
	for hi, hh := range h.Hosts {
		if hh.History == nil {
			continue
		}
		starts := make([]float64, len(hh.Runs))
		for i, r := range hh.Runs {
			starts[i] = float64(r.StartedAt.UnixMilli()) / 1000
		}
		for _, s := range hh.Series {
			ci, ok := index[s.Step]
			if !ok {
				ci = len(charts)
				index[s.Step] = ci
				charts = append(charts, Chart{ID: "history-" + strconv.Itoa(ci), Title: s.Step, Unit: h.Measure, XLabel: "run started", XTime: true})
			}
			c := &charts[ci]
			rd := RunData{Run: int64(hi), X: starts}
			y := make([]float64, len(s.Points))
			at := map[int64]int{}
			for i, p := range s.Points {
				y[i] = math.NaN()
				if p.Value != nil {
					y[i] = *p.Value
				}
				at[p.Run] = i
			}
			rd.Series = []Series{{Label: HostLabel(hh.Host, hh.HostID), Y: y, Colour: HostColours[hi%len(HostColours)]}}
			for _, ch := range s.Changes {
				i, ok := at[ch.Run]
				if !ok || i >= len(starts) {
					continue
				}
				c.Marks = append(c.Marks, Mark{Run: len(c.Runs), X: starts[i], Y: y[i], Kind: ch.Kind,
					Label: fmt.Sprintf("%s on %s: %+.1f%%", ch.Kind, HostLabel(hh.Host, hh.HostID), ch.ChangePct)})
			}
			c.Runs = append(c.Runs, rd)
		}
	}
	return charts
}
