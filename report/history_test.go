package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wtd/compare"
)

// TestHistoryChartsAcrossHosts: a step's chart has a line per host at its
// runs' starts, a run without a value is null in the page's data (not 0),
// and only the host with a change point has a mark, at the run after it.
func TestHistoryChartsAcrossHosts(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	v := func(x float64) *float64 { return &x }
	host := func(name, id string, start time.Duration, vals []*float64, changes []compare.HistoryChange) compare.HostHistory {
		h := &compare.History{Series: []compare.HistorySeries{{Step: "reads", Changes: changes}}}
		for i, val := range vals {
			h.Runs = append(h.Runs, compare.RunRef{ID: int64(i + 1), StartedAt: t0.Add(start + time.Duration(i)*time.Minute)})
			h.Series[0].Points = append(h.Series[0].Points, compare.HistoryPoint{Run: int64(i + 1), Value: val})
		}
		return compare.HostHistory{Host: name, HostID: id, History: h}
	}
	h := &compare.HostsHistory{Measure: "ops/s", Hosts: []compare.HostHistory{
		host("db1", "aaaa", 0, []*float64{v(400), v(401), v(399), v(200), v(201), v(199)},
			[]compare.HistoryChange{{Run: 4, Kind: "regression", ChangePoint: compare.ChangePoint{ChangePct: -50}}}),
		host("", "bbbb", 30*time.Second, []*float64{v(400), v(400), nil, v(400)}, nil),
	}}
	charts := HistoryCharts(h)
	if len(charts) != 1 || len(charts[0].Runs) != 2 || !charts[0].XTime {
		t.Fatalf("charts %+v", charts)
	}
	data, err := chartJSON(0, nil, charts)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Charts []struct {
			Xtime bool
			Runs  []struct {
				X      []float64
				Labels []string
				Y      [][]*float64
			}
			Marks []struct {
				Run   int
				Kind  string
				Label string
				X, Y  float64
			}
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	c := got.Charts[0]
	a, b := c.Runs[0], c.Runs[1]
	if !c.Xtime || len(a.X) != 6 || a.X[0] != float64(t0.Unix()) || a.X[3] != float64(t0.Unix()+180) || len(b.X) != 4 || b.X[0] != float64(t0.Unix()+30) {
		t.Errorf("x: host A %v, host B %v", a.X, b.X)
	}
	if a.Labels[0] != "db1 (aaaa)" || b.Labels[0] != "bbbb" {
		t.Errorf("labels %q %q", a.Labels, b.Labels)
	}
	if y := b.Y[0]; len(y) != 4 || y[2] != nil || y[3] == nil || *y[3] != 400 {
		t.Errorf("host B's values %s: want null for its third run", data)
	}
	if len(c.Marks) != 1 || c.Marks[0].Run != 0 || c.Marks[0].Kind != "regression" || c.Marks[0].X != a.X[3] || c.Marks[0].Y != 200 ||
		!strings.Contains(c.Marks[0].Label, "db1 (aaaa): -50.0%") {
		t.Errorf("marks %+v, want one regression on host A at its fourth run", c.Marks)
	}
	if charts[0].Runs[0].Series[0].Colour == charts[0].Runs[1].Series[0].Colour {
		t.Errorf("both hosts in %s", charts[0].Runs[0].Series[0].Colour)
	}
}
