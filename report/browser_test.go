package report

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"wtd/engine/compare"
	"wtd/engine/store"
)

// chromium returns Debian's Chromium (or another Chrome) on PATH, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifactDir is where browser tests keep their screenshots:
// $WTD_TEST_ARTIFACTS, else wtd-test-artifacts in the temp dir.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("WTD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wtd-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type drawnChart struct {
	ID       string `json:"id"`
	Series   int    `json:"series"`
	Expected int    `json:"expected"`
}

// linePixels counts, per chart, the canvas pixels in the colours of its
// lines (charts.js's palette): lines were drawn, not just the axes, grid
// and step marks (greys, and pale red for a second run's steps).
const linePixels = `Array.from(document.querySelectorAll(".chart")).map(function (div) {
  var pal = [[31,119,180],[214,39,40],[44,160,44],[255,127,14],[148,103,189],[140,86,75],[227,119,194],[23,190,207]];
  var c = div.querySelector("canvas");
  if (!c) return 0;
  var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, n = 0;
  for (var i = 0; i < d.length; i += 4) {
    if (d[i+3] < 128) continue;
    for (var k = 0; k < pal.length; k++)
      if (Math.abs(d[i] - pal[k][0]) < 16 && Math.abs(d[i+1] - pal[k][1]) < 16 && Math.abs(d[i+2] - pal[k][2]) < 16) { n++; break; }
  }
  return n;
})`

// TestReportInBrowser opens reports of a recorded run, and of two runs
// overlaid, in headless Chromium: no console error, no exception, no
// request beyond the file itself, every chart drawn with its series, and a
// screenshot kept (see artifactDir). Without Chromium the test is skipped,
// unless CI=true or WTD_TEST_BROWSER=1, where it fails.
func TestReportInBrowser(t *testing.T) {
	exe := chromium()
	if exe == "" {
		if os.Getenv("CI") == "true" || os.Getenv("WTD_TEST_BROWSER") == "1" {
			t.Fatal("no Chromium on PATH: install Debian's chromium (apt-get install -y chromium)")
		}
		t.Skip("no Chromium on PATH (apt-get install -y chromium); CI=true or WTD_TEST_BROWSER=1 make this a failure")
	}
	ctx := context.Background()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))...)
	defer cancelAlloc()
	for _, tc := range []struct {
		name string
		st   func(*testing.T) *store.Store
		runs []int64
	}{{"report-run", recorded, []int64{1}}, {"report-overlay", recorded, []int64{1, 2}}, {"report-knee", recordedKnee, []int64{1}}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(ctx, tc.st(t), tc.runs...)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), tc.name+".html")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.WriteHTML(f, compare.Options{}); err != nil {
				t.Fatal(err)
			}
			f.Close()

			bctx, cancel := chromedp.NewContext(allocCtx)
			defer cancel()
			bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
			defer cancelTimeout()
			var mu sync.Mutex
			var problems []string
			// Start the tab, enable the network domain and listen before
			// the page loads.
			if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
				t.Fatalf("start the browser: %v", err)
			}
			chromedp.Listen(bctx, func(ev any) {
				mu.Lock()
				defer mu.Unlock()
				switch e := ev.(type) {
				case *runtime.EventConsoleAPICalled:
					if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
						var args []string
						for _, a := range e.Args {
							args = append(args, fmt.Sprint(a.Value)+a.Description)
						}
						problems = append(problems, fmt.Sprintf("console %s: %s", e.Type, strings.Join(args, " ")))
					}
				case *runtime.EventExceptionThrown:
					msg := e.ExceptionDetails.Text
					if ex := e.ExceptionDetails.Exception; ex != nil {
						msg += " " + ex.Description
					}
					problems = append(problems, "exception: "+msg)
				case *network.EventRequestWillBeSent:
					if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
						problems = append(problems, "request: "+u)
					}
				}
			})
			err = chromedp.Do(bctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body"))
			if err == nil {
				_, err = chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf("window.wtdCharts && window.wtdCharts.length === %d", len(m.Charts)),
					chromedp.WithPollingTimeout(20*time.Second)))
			}
			var charts []drawnChart
			var pixels []int
			var shot []byte
			if err == nil {
				charts, err = chromedp.Run(bctx, chromedp.Evaluate[[]drawnChart]("window.wtdCharts"))
			}
			if err == nil {
				pixels, err = chromedp.Run(bctx, chromedp.Evaluate[[]int](linePixels))
			}
			if err == nil {
				shot, err = chromedp.Run(bctx, chromedp.FullScreenshot(100))
			}
			if err != nil {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("browser: %v (problems so far: %v)", err, problems)
			}
			out := filepath.Join(artifactDir(t), tc.name+".png")
			if err := os.WriteFile(out, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s (%d KB)", out, len(shot)/1024)
			mu.Lock()
			for _, p := range problems {
				t.Errorf("%s", p)
			}
			mu.Unlock()
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
		})
	}
}
