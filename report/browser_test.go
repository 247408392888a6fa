package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbrowser"
)

// TestReportInBrowser opens reports of a recorded run, of two runs
// overlaid, and of a thread sweep, in headless Chromium: no console error, no exception, no
// request beyond the file itself, every chart drawn with its series, and a
// screenshot kept (see testbrowser.ArtifactDir). Without Chromium the test
// is skipped, unless CI=true or WTD_TEST_BROWSER=1, where it fails.
func TestReportInBrowser(t *testing.T) {
	exe := testbrowser.Chromium(t)
	ctx := context.Background()
	allocCtx := testbrowser.Allocator(t, exe)
	for _, tc := range []struct {
		name string
		st   func(*testing.T) *store.Store
		runs []int64
	}{{"report-run", recorded, []int64{1}}, {"report-overlay", recorded, []int64{1, 2}}, {"report-knee", recordedKnee, []int64{1}}, {"report-tune", recordedTune, []int64{1}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // their recorded runs are made at once
			m, err := Load(ctx, tc.st(t), tc.runs...)
			if err != nil {
				t.Fatal(err)
			}
			drawnInBrowser(t, allocCtx, m, tc.name)
		})
	}
}

// TestTuneMarksInBrowser draws the charts of a search whose trials include
// a failed and an infeasible one, with confirmation rounds: every series
// kind (points, the best so far, the rounds) is drawn.
func TestTuneMarksInBrowser(t *testing.T) {
	exe := testbrowser.Chromium(t)
	allocCtx := testbrowser.Allocator(t, exe)
	rec := tuneRecord()
	m := &Model{Records: []*record.Record{rec}, Charts: tuneCharts([]*record.Record{rec})}
	drawnInBrowser(t, allocCtx, m, "report-tune-marks")
}

// drawnInBrowser opens m's report in a tab of allocCtx's browser and checks
// that no console error, exception or request beyond the file itself came,
// and that every chart was drawn with its series and has pixels in its
// lines' colours; a screenshot named name is kept.
func drawnInBrowser(t *testing.T, allocCtx context.Context, m *Model, name string) {
	t.Helper()
	path := writeReport(t, m, name)
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	problems, err := testbrowser.Watch(bctx, func(u string) bool {
		return strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "data:")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(bctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body"))
	if err == nil {
		_, err = chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf("window.wtdCharts && window.wtdCharts.length === %d", len(m.Charts)),
			chromedp.WithPollingTimeout(20*time.Second)))
	}
	var charts []testbrowser.DrawnChart
	var pixels []int
	if err == nil {
		charts, err = chromedp.Run(bctx, chromedp.Evaluate[[]testbrowser.DrawnChart]("window.wtdCharts"))
	}
	if err == nil {
		pixels, err = chromedp.Run(bctx, chromedp.Evaluate[[]int](testbrowser.LinePixels))
	}
	if err != nil {
		t.Fatalf("browser: %v (problems so far: %v)", err, problems.List())
	}
	testbrowser.Screenshot(t, bctx, name)
	for _, p := range problems.List() {
		t.Errorf("%s", p)
	}
	if len(charts) != len(m.Charts) || len(pixels) != len(m.Charts) {
		t.Fatalf("%d charts drawn, %d canvases, want %d", len(charts), len(pixels), len(m.Charts))
	}
	for i, c := range charts {
		want := m.Charts[i]
		if c.ID != want.ID || c.Series != want.SeriesCount() || c.Expected != want.SeriesCount() {
			t.Errorf("chart %s: drawn with %d series (data says %d), want %s with %d", c.ID, c.Series, c.Expected, want.ID, want.SeriesCount())
		}
		if pixels[i] < 20 {
			t.Errorf("chart %s: %d pixels in its lines' colours", c.ID, pixels[i])
		}
	}
}

// TestImportedReportInBrowser opens the reports of real FTDC files
// imported, 7.0 and an 8.0 replica set's primary, in headless Chromium:
// the cache, eviction, tickets, host CPU and disk charts, and for the
// replica set the replication lag, are drawn with their data.
func TestImportedReportInBrowser(t *testing.T) {
	exe := testbrowser.Chromium(t)
	allocCtx := testbrowser.Allocator(t, exe)
	st, runs := imported(t)
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"report-import-7.0", ftdc70, []string{"cache", "pages", "evict", "tickets", "cpu", "disk"}},
		{"report-import-8.0-replset", ftdc8015, []string{"cache", "pages", "evict", "tickets", "cpu", "disk", "repl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(context.Background(), st, runs[tc.path])
			if err != nil {
				t.Fatal(err)
			}
			got := chartsByID(m)
			for _, id := range tc.want {
				if c, ok := got[id]; !ok || c.SeriesCount() == 0 || measured(c) == 0 {
					t.Errorf("no %s chart with data in the report", id)
				}
			}
			drawnInBrowser(t, allocCtx, m, tc.name)
		})
	}
}

// A table wider than the window says so above it (its scroll bar may be
// hidden), and stops saying so when the window is wide enough.
func TestWideTablesSaySo(t *testing.T) {
	exe := testbrowser.Chromium(t)
	ctx := context.Background()
	allocCtx := testbrowser.Allocator(t, exe)
	m, err := Load(ctx, recorded(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	path := writeReport(t, m, "wide")
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	count := `document.querySelectorAll("p.wide-note + pre.wide").length`
	// How many of the page's tables overflow, and whether exactly those
	// carry the note.
	agree := `(function () { var n = 0, ok = true; document.querySelectorAll("pre, .scroll").forEach(function (el) {
		var over = el.scrollWidth > el.clientWidth + 1, noted = !!(el.previousElementSibling && el.previousElementSibling.classList.contains("wide-note"));
		if (over) n++; if (over !== noted) ok = false; }); return ok ? n : -1; })()`
	var narrow, wide int
	err = chromedp.Do(bctx, chromedp.EmulateViewport(420, 900), chromedp.Navigate("file://"+path), chromedp.WaitReady("body"))
	if err == nil {
		_, err = chromedp.Run(bctx, chromedp.Poll[bool]("window.wtdCharts && window.wtdCharts.length > 0", chromedp.WithPollingTimeout(20*time.Second)))
	}
	if err == nil {
		narrow, err = chromedp.Run(bctx, chromedp.Evaluate[int](count))
	}
	if err == nil {
		err = chromedp.Do(bctx, chromedp.EmulateViewport(4000, 900))
	}
	if err == nil {
		_, err = chromedp.Run(bctx, chromedp.Poll[bool](agree+" >= 0", chromedp.WithPollingTimeout(5*time.Second)))
	}
	if err == nil {
		wide, err = chromedp.Run(bctx, chromedp.Evaluate[int](agree))
	}
	if err != nil {
		t.Fatalf("browser: %v (narrow: %d notes)", err, narrow)
	}
	if narrow < 1 || wide < 0 || wide >= narrow {
		t.Errorf("tables marked wide: %d in a 420 px window; in a 4000 px one %d overflowing (-1: the notes do not match them); want fewer", narrow, wide)
	}
}

// canvasLog is a script, run before the page's own, that records on each
// chart's canvas the x of every moveTo and the left and right edges of
// every text filled, where the canvas's text alignment puts them.
const canvasLog = `(function () {
  var P = CanvasRenderingContext2D.prototype, moveTo = P.moveTo, fillText = P.fillText;
  window.wtdCanvasLog = [];
  // A chart's canvas may be drawn on before it is in the page: the log
  // keeps the canvas, and wtdCanvasOps names its chart afterwards.
  function chart(ctx) { return ctx.canvas; }
  window.wtdCanvasOps = function () {
    return window.wtdCanvasLog.map(function (e) {
      var d = e.chart.closest && e.chart.closest('[id^="chart-"]');
      return { chart: d ? d.id : "", op: e.op, text: e.text, x: e.x, right: e.right };
    });
  };
  P.moveTo = function (x, y) {
    window.wtdCanvasLog.push({ chart: chart(this), op: "move", x: x });
    return moveTo.apply(this, arguments);
  };
  P.fillText = function (text, x, y) {
    var w = this.measureText(text).width, a = this.textAlign, left = x;
    if (a === "center") left = x - w / 2; else if (a === "right" || a === "end") left = x - w;
    window.wtdCanvasLog.push({ chart: chart(this), op: "text", text: String(text), x: left, right: left + w });
    return fillText.apply(this, arguments);
  };
})();`

// canvasOp is one entry of canvasLog's record.
type canvasOp struct {
	Chart string  `json:"chart"`
	Op    string  `json:"op"`
	Text  string  `json:"text"`
	X     float64 `json:"x"`
	Right float64 `json:"right"`
}

// TestStepTitlesRightOfTheirLines: on every chart in time, a step's title
// (or number) starts just right of the line at the step's start, so that it
// reads as that step's and not the one before (uPlot leaves the canvas
// aligning text to the right after drawing its y axis).
func TestStepTitlesRightOfTheirLines(t *testing.T) {
	exe := testbrowser.Chromium(t)
	ctx := context.Background()
	allocCtx := testbrowser.Allocator(t, exe)
	m, err := Load(ctx, recorded(t), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	path := writeReport(t, m, "step-titles")
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()
	var ops []canvasOp
	_, err = chromedp.Call(bctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: canvasLog})
	if err == nil {
		err = chromedp.Do(bctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body"))
	}
	if err == nil {
		_, err = chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf("window.wtdCharts && window.wtdCharts.length === %d", len(m.Charts)),
			chromedp.WithPollingTimeout(20*time.Second)))
	}
	if err == nil {
		ops, err = chromedp.Run(bctx, chromedp.Evaluate[[]canvasOp]("window.wtdCanvasOps()"))
	}
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, c := range m.Charts {
		if c.XLabel != "" || len(c.Bounds) == 0 {
			continue
		}
		marks := map[string]bool{}
		for _, b := range c.Bounds {
			marks[b.Label] = true
			marks[fmt.Sprintf("#%d", b.Seq)] = true
		}
		line, titles := -1.0, 0
		for _, op := range ops {
			if op.Chart != "chart-"+c.ID {
				continue
			}
			if op.Op == "move" {
				line = op.X
				continue
			}
			if !marks[op.Text] {
				continue
			}
			titles++
			if line < 0 || op.X < line || op.X > line+12 {
				t.Errorf("chart %s: step title %q drawn from x=%.1f to %.1f, its step's line at x=%.1f: want it starting just right of the line", c.ID, op.Text, op.X, op.Right, line)
			}
		}
		if titles == 0 {
			t.Errorf("chart %s: no step title drawn (%d steps)", c.ID, len(c.Bounds))
		}
	}
}

// writeReport writes m's report page as NAME.html in a temporary
// directory and returns its path.
func writeReport(t *testing.T, m *Model, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.WriteHTML(f, compare.Options{}); err != nil {
		t.Fatal(err)
	}
	return path
}
