package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"wtd/compare"
	"wtd/engine"
	"wtd/engine/store"
	"wtd/internal/testbin"
)

// playbook is a small real experiment: a load, then a mixed workload for a
// fixed time in two rounds with a restart between them.
const playbook = `
local p = params{ docs = 3000, seconds = 2 }
local m = mongod.start{ cacheSizeGB = 0.25 }
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 500 } end }
for round = 1, 2 do
  if round == 2 then m:restart{} end
  host.drop_caches()
  step{ name = "mixed", round = round, run = function()
    return m:workload{ ns = "t.c", duration = p.seconds, mix = { read = 3, update = 1 }, doc_bytes = 500 }
  end }
end
print("done")
report.table{ title = "report test" }
`

var (
	recordOnce sync.Once
	recordDir  string
	recordedDB string
)

// TestMain removes the recorded runs at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{recordDir, kneeDir, importsDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// recorded returns a database with two runs of playbook (ids 1 and 2).
func recorded(t *testing.T) *store.Store {
	t.Helper()
	recordOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-report-test-")
		if err != nil {
			t.Fatal(err)
		}
		recordDir = dir
		recordedDB = testbin.RecordRuns(t, dir, playbook, nil, nil)
	})
	if recordedDB == "" {
		t.Fatal("no recorded runs (the first test to make them failed)")
	}
	st, err := store.OpenExisting(context.Background(), recordedDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// wantSeries is how many lines each chart draws for one run of playbook.
var wantSeries = map[string]int{"ops": 1, "p99": 1, "cache": 3, "pages": 2, "evict": 1, "tickets": 4, "cpu": 3}

func TestModelOfARecordedRun(t *testing.T) {
	st := recorded(t)
	m, err := Load(context.Background(), st, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Chart{}
	for _, c := range m.Charts {
		got[c.ID] = c
		if len(c.Bounds) != 3 || c.Bounds[1].Label != "mixed (round=1)" || !(c.Bounds[1].Start < c.Bounds[1].End && c.Bounds[1].End <= c.Bounds[2].Start) {
			t.Errorf("chart %s: step bounds %+v", c.ID, c.Bounds)
		}
		for _, r := range c.Runs {
			for _, s := range r.Series {
				if len(s.Y) != len(r.X) {
					t.Errorf("chart %s series %s: %d values for %d x", c.ID, s.Label, len(s.Y), len(r.X))
				}
			}
		}
	}
	for id, n := range wantSeries {
		if got[id].SeriesCount() != n {
			t.Errorf("chart %s: %d series, want %d", id, got[id].SeriesCount(), n)
		}
	}
	// Per-second operations: two rounds of (about) two full seconds, each
	// followed by a gap; each second's count is a real rate.
	ops := got["ops"].Runs[0]
	gaps := 0
	for _, y := range ops.Series[0].Y {
		if isNaN(y) {
			gaps++
		}
	}
	if len(ops.X) < 5 || gaps != 2 || !isNaN(ops.Series[0].Y[len(ops.X)-1]) || ops.Series[0].Y[0] < 100 {
		t.Errorf("ops/s x %v y %v", ops.X, ops.Series[0].Y)
	}
	// The pages-read line is the counter's rate: over the run, the rate
	// times the time between samples adds up to the pages the counter
	// counted (from zero again where it dropped), and the run did read
	// pages (into the cache the restart emptied), so a running total
	// drawn instead would not add up.
	pages := got["pages"].Runs[0]
	cols, err := st.SeriesSet(context.Background(), 1, "server:m1", []string{engine.CacheMetric("pages read into cache")})
	// The chart has a point per sample, and one gap (a NaN) where no
	// sample was taken for more than three intervals (the restart).
	pages = withoutGaps(t, pages, len(cols.TS))
	if err != nil || len(cols.Values) != 1 || len(cols.TS) != len(pages.X) {
		t.Fatalf("pages read: %v, %d samples for %d x", err, len(cols.TS), len(pages.X))
	}
	counted, drawn := 0.0, 0.0
	for i, v := range cols.Values[0][1:] {
		if prev := cols.Values[0][i]; v >= prev {
			counted += v - prev
		} else {
			counted += v // restarted: counting from zero
		}
		drawn += pages.Series[0].Y[i+1] * (pages.X[i+1] - pages.X[i])
	}
	if !(counted >= 1 && math.Abs(drawn-counted) <= 0.01*counted) {
		t.Errorf("pages read: the line adds up to %.1f pages, the counter counted %.0f", drawn, counted)
	}
}

func isNaN(v float64) bool { return v != v }

func TestHTMLIsSelfContained(t *testing.T) {
	st := recorded(t)
	var b bytes.Buffer
	if err := WriteHTML(context.Background(), st, &b, 1); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, bad := range []string{`src="http`, `href="http`, "url(http", "<link", "@import", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(html, bad) {
			t.Errorf("the report refers to %q", bad)
		}
	}
	for _, want := range []string{"<h2>Run 1: ", "docs=3000 seconds=2", "drop_caches", "Summary table: report test",
		"│ mixed │", `id="chart-ops"`, `id="chart-cpu"`, "var uPlot=", "load started", "done\n"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if b.Len() > 2<<20 {
		t.Errorf("report of a short run is %d bytes", b.Len())
	}
}

func TestOverlayComparesRuns(t *testing.T) {
	st := recorded(t)
	m, err := Load(context.Background(), st, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	heats := 0
	for _, c := range m.Charts {
		if len(c.Heat) > 0 {
			// A heatmap a run: its own steps marked.
			heats++
			if len(c.Runs) != 1 || len(c.Bounds) != 3 || c.ID != fmt.Sprintf("heat-%d", c.Runs[0].Run) || c.Bounds[0].Run != c.Runs[0].Run {
				t.Errorf("overlay heatmap %s: runs %d, %d bounds", c.ID, len(c.Runs), len(c.Bounds))
			}
			continue
		}
		if n := wantSeries[c.ID]; n > 0 && c.SeriesCount() != 2*n {
			t.Errorf("overlay chart %s: %d series, want %d", c.ID, c.SeriesCount(), 2*n)
		}
		if len(c.Bounds) != 6 || len(c.Runs) != 2 || !strings.HasPrefix(c.Runs[1].Series[0].Label, "run 2: ") {
			t.Errorf("overlay chart %s: %d bounds, runs %d", c.ID, len(c.Bounds), len(c.Runs))
		}
	}
	if heats != 2 {
		t.Errorf("%d heatmaps in the overlay of two runs, want 2", heats)
	}
	var b bytes.Buffer
	if err := m.WriteHTML(&b, compare.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>Run 2 compared with run 1</h2>", "Comparable: same playbook", "mixed, all rounds",
		"A difference needs a change of at least 5%."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("overlay lacks %q", want)
		}
	}
	// The table's values are printed as wtd compare prints them, never
	// in exponent form (1.085e+05).
	if exp := regexp.MustCompile(`<td class="num">[-0-9.]+e[+-][0-9]+</td>`).FindString(b.String()); exp != "" {
		t.Errorf("the comparison table prints %s", exp)
	}
}

// withoutGaps drops from rd the gap points the charts put where samples
// are missing (NaN in every series, x between two samples' x), when rd
// has more points than samples.
func withoutGaps(t *testing.T, rd RunData, samples int) RunData {
	t.Helper()
	if len(rd.X) <= samples {
		return rd
	}
	out := RunData{Run: rd.Run, Series: make([]Series, len(rd.Series))}
	for i := range rd.X {
		gap := true
		for _, s := range rd.Series {
			gap = gap && isNaN(s.Y[i])
		}
		if gap && i > 0 && i < len(rd.X)-1 && len(rd.X)-i > samples-len(out.X) {
			continue
		}
		out.X = append(out.X, rd.X[i])
		for k, s := range rd.Series {
			out.Series[k].Label = s.Label
			out.Series[k].Y = append(out.Series[k].Y, s.Y[i])
		}
	}
	return out
}
