package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wtd/internal/testbrowser"
	"wtd/report"
)

// TestDashboardInBrowser loads the dashboard's pages, served by the web
// handler on a loopback port, in headless Chromium: no console error, no
// exception, no request beyond the daemon itself; the runs list shows the
// two runs and run 2's verdict, slower; run 1's page drew every chart of
// its report with the expected number of series, the compare page shows
// the verdict that run 2, twice as slow, must get; the schedules page its
// schedule. A screenshot of each page is kept (see
// testbrowser.ArtifactDir). Without Chromium the test is skipped, unless
// CI=true or WTD_TEST_BROWSER=1, where it fails.
func TestDashboardInBrowser(t *testing.T) {
	exe := testbrowser.Chromium(t)
	st := recorded(t)
	srv := serve(t, st)
	m, err := report.Load(context.Background(), st, 1)
	if err != nil {
		t.Fatal(err)
	}
	allocCtx := testbrowser.Allocator(t, exe)
	open := func(t *testing.T, path string) (context.Context, *testbrowser.Problems) {
		bctx, cancel := chromedp.NewContext(allocCtx)
		t.Cleanup(cancel)
		bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
		t.Cleanup(cancelTimeout)
		problems, err := testbrowser.Watch(bctx, func(u string) bool {
			return strings.HasPrefix(u, srv.URL+"/") || strings.HasPrefix(u, "data:")
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+path), chromedp.WaitReady("body")); err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
		t.Cleanup(func() {
			for _, p := range problems.List() {
				t.Errorf("%s: %s", path, p)
			}
		})
		return bctx, problems
	}
	eval := func(t *testing.T, ctx context.Context, js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}

	t.Run("runs", func(t *testing.T) {
		ctx, _ := open(t, "/")
		rows := eval(t, ctx, `Array.from(document.querySelectorAll("tr.run td:nth-child(2)")).map(td => td.innerText).join(",")`)
		verdicts := eval(t, ctx, `Array.from(document.querySelectorAll("tr.run td.verdict")).map(td => td.innerText).join(",")`)
		if rows != "2,1" || verdicts != "slower,–" {
			t.Errorf("runs list shows runs %q with verdicts %q, want 2,1 and slower,–", rows, verdicts)
		}
		testbrowser.Screenshot(t, ctx, "dashboard-runs")
	})

	t.Run("run", func(t *testing.T) {
		ctx, problems := open(t, "/runs/1")
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf("window.wtdCharts && window.wtdCharts.length === %d", len(m.Charts)),
			chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("charts not drawn: %v (problems: %v)", err, problems.List())
		}
		charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]testbrowser.DrawnChart]("window.wtdCharts"))
		if err != nil {
			t.Fatal(err)
		}
		pixels, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](testbrowser.LinePixels))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Charts) < 5 || len(charts) != len(m.Charts) || len(pixels) != len(m.Charts) {
			t.Fatalf("%d charts drawn, %d canvases, want %d (5 at least)", len(charts), len(pixels), len(m.Charts))
		}
		for i, c := range charts {
			want := m.Charts[i]
			if c.ID != want.ID || c.Series != want.SeriesCount() || c.Expected != want.SeriesCount() || want.SeriesCount() == 0 {
				t.Errorf("chart %s: drawn with %d series (data says %d), want %s with %d", c.ID, c.Series, c.Expected, want.ID, want.SeriesCount())
			}
			if pixels[i] < 20 {
				t.Errorf("chart %s: %d pixels in its lines' colours", c.ID, pixels[i])
			}
		}
		if nav := eval(t, ctx, `document.querySelector("nav.wtd").innerText`); !strings.Contains(nav, "Schedules") {
			t.Errorf("run page's links: %q", nav)
		}
		testbrowser.Screenshot(t, ctx, "dashboard-run")
	})

	t.Run("compare", func(t *testing.T) {
		ctx, _ := open(t, "/compare?a=1&b=2")
		verdict := eval(t, ctx, `(document.querySelector("p.verdict") || {innerText: ""}).innerText`)
		rows := eval(t, ctx, `String(document.querySelectorAll("table tr").length)`)
		if strings.TrimSpace(verdict) != "verdict: slower in ops/s: mixed, all rounds" || rows == "0" || rows == "1" {
			t.Errorf("compare page: verdict %q, %s table rows", verdict, rows)
		}
		testbrowser.Screenshot(t, ctx, "dashboard-compare")
	})

	t.Run("schedules", func(t *testing.T) {
		ctx, _ := open(t, "/schedules")
		if name := eval(t, ctx, `document.querySelector("tr.schedule td").innerText`); name != "a" {
			t.Errorf("schedules page: first schedule %q", name)
		}
		testbrowser.Screenshot(t, ctx, "dashboard-schedules")
	})
}
