package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/chromedp/chromedp"
)

// ErrNoChromium is the error of WritePNGs when no browser can be found.
var ErrNoChromium = errors.New("no Chromium on PATH: wtd report --png draws the charts in Chromium, headless; install it (Debian: apt-get install -y chromium) or name it with --chromium PATH")

// FindChromium returns the browser WritePNGs runs: exe when it is given
// (a path or a name on PATH), else the first of chromium,
// chromium-browser, google-chrome and headless-shell on PATH.
func FindChromium(exe string) (string, error) {
	if exe != "" {
		p, err := exec.LookPath(exe)
		if err != nil {
			return "", fmt.Errorf("--chromium %q: %w", exe, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// pngTimeout bounds drawing a page's charts.
const pngTimeout = 2 * time.Minute

// WritePNGs draws the page (as WritePage writes it) in Chromium, headless,
// and writes each chart, its title included, as DIR/NN-ID.png (NN its place
// on the page); it returns the files written. The page is loaded from a
// file and fetches nothing.
func (m *Model) WritePNGs(ctx context.Context, popt PageOptions, dir, chromium string) ([]string, error) {
	var page bytes.Buffer
	if err := m.WritePage(&page, popt); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "wtd-png-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	html := filepath.Join(tmp, "report.html")
	if err := os.WriteFile(html, page.Bytes(), 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, pngTimeout)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(filepath.Join(tmp, "profile")))...)
	defer cancelAlloc()
	bctx, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+html), chromedp.WaitReady("body")); err != nil {
		return nil, fmt.Errorf("open the report in %s: %w", chromium, err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](fmt.Sprintf("window.wtdCharts && window.wtdCharts.length === %d", len(m.Charts)),
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		return nil, fmt.Errorf("draw the charts in %s: %w", chromium, err)
	}
	var files []string
	for i, c := range m.Charts {
		// The chart's box: its title, note and canvas.
		shot, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.Search(fmt.Sprintf(`//div[@id=%q]/..`, "chart-"+c.ID))))
		if err != nil {
			return files, fmt.Errorf("chart %s: %w", c.ID, err)
		}
		out := filepath.Join(dir, fmt.Sprintf("%02d-%s.png", i+1, fileSafe(c.ID)))
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			return files, err
		}
		files = append(files, out)
	}
	return files, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileSafe is a chart id as a file name.
func fileSafe(id string) string { return unsafeName.ReplaceAllString(id, "_") }
