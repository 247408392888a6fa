// Package testbrowser drives Debian's Chromium, headless, for the tests
// of the HTML the project writes (reports, the daemon's dashboard): it
// finds the browser, watches a tab for console errors, exceptions and
// requests that leave the page's own origin, and keeps screenshots as
// artifacts of the test run. Tests import it from _test files only.
package testbrowser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium returns Debian's Chromium (or another Chrome) on PATH. Without
// one the test is skipped, unless CI=true or WTD_TEST_BROWSER=1, where it
// fails.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("WTD_TEST_BROWSER") == "1" {
		t.Fatal("no Chromium on PATH: install Debian's chromium (apt-get install -y chromium)")
	}
	t.Skip("no Chromium on PATH (apt-get install -y chromium); CI=true or WTD_TEST_BROWSER=1 make this a failure")
	return ""
}

// ArtifactDir is where browser tests keep their screenshots:
// $WTD_TEST_ARTIFACTS, else wtd-test-artifacts in the temp dir.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("WTD_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wtd-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Allocator starts headless Chromium exe (1400x1000, no sandbox) for the
// test; the browser ends with it.
func Allocator(t testing.TB, exe string) context.Context {
	ctx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))...)
	t.Cleanup(cancel)
	return ctx
}

// Problems collects what went wrong in a tab: console errors, warnings and
// failed asserts, uncaught exceptions, and requests to URLs that allowed
// refuses.
type Problems struct {
	mu   sync.Mutex
	list []string
}

// List returns the problems so far.
func (p *Problems) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

func (p *Problems) add(s string) {
	p.mu.Lock()
	p.list = append(p.list, s)
	p.mu.Unlock()
}

// Watch starts the tab of ctx (a chromedp context), enables its network
// domain and collects its problems from then on.
func Watch(ctx context.Context, allowed func(url string) bool) (*Problems, error) {
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return nil, fmt.Errorf("start the browser: %w", err)
	}
	p := &Problems{}
	chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, fmt.Sprint(a.Value)+a.Description)
				}
				p.add(fmt.Sprintf("console %s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if ex := e.ExceptionDetails.Exception; ex != nil {
				msg += " " + ex.Description
			}
			p.add("exception: " + msg)
		case *network.EventRequestWillBeSent:
			if !allowed(e.Request.URL) {
				p.add("request: " + e.Request.URL)
			}
		case *network.EventLoadingFailed:
			p.add(fmt.Sprintf("loading failed: %s %s", e.Type, e.ErrorText))
		case *network.EventResponseReceived:
			if e.Response.Status >= 400 {
				p.add(fmt.Sprintf("response %d: %s", int(e.Response.Status), e.Response.URL))
			}
		}
	})
	return p, nil
}

// Screenshot takes a full-page screenshot of the tab and keeps it as
// name.png in ArtifactDir; it returns the file's path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	out := filepath.Join(ArtifactDir(t), name+".png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KB)", out, len(shot)/1024)
	return out
}

// DrawnChart is what a report's charts.js says of a chart it drew
// (window.wtdCharts): its id, the series it drew and those its data has.
type DrawnChart struct {
	ID       string `json:"id"`
	Series   int    `json:"series"`
	Expected int    `json:"expected"`
}

// Palette is charts.js's palette of line colours.
var Palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// LinePixels is a script that counts, per chart of a report, the canvas
// pixels in the colours of its lines (charts.js's palette): lines were
// drawn, not just the axes, grid and step marks (greys, and pale red for a
// second run's steps).
var LinePixels = ColourPixels(Palette...) + `.map(function (a) { return a.reduce(function (x, y) { return x + y; }, 0); })`

// ColourPixels is a script that counts, per chart of a page (the canvas of
// each .chart), the pixels in each of colours ("#rrggbb", within 16 a
// channel): an array per chart, a count per colour.
func ColourPixels(colours ...string) string {
	var rgb []string
	for _, c := range colours {
		var r, g, b int
		if _, err := fmt.Sscanf(c, "#%02x%02x%02x", &r, &g, &b); err != nil {
			panic("testbrowser: colour " + c)
		}
		rgb = append(rgb, fmt.Sprintf("[%d,%d,%d]", r, g, b))
	}
	return `Array.from(document.querySelectorAll(".chart")).map(function (div) {
  var pal = [` + strings.Join(rgb, ",") + `], n = pal.map(function () { return 0; });
  var c = div.querySelector("canvas");
  if (!c) return n;
  var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  for (var i = 0; i < d.length; i += 4) {
    if (d[i+3] < 128) continue;
    for (var k = 0; k < pal.length; k++)
      if (Math.abs(d[i] - pal[k][0]) < 16 && Math.abs(d[i+1] - pal[k][1]) < 16 && Math.abs(d[i+2] - pal[k][2]) < 16) { n[k]++; break; }
  }
  return n;
})`
}
