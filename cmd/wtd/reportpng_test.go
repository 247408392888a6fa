package main

import (
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/internal/testbrowser"
)

// TestReportPNGs: wtd report --png writes each chart of a recorded run as a
// PNG drawn by Chromium, with its lines in it; without a Chromium it says
// what to install.
func TestReportPNGs(t *testing.T) {
	testbrowser.Chromium(t)
	fx := recordedRuns(t)
	dir := filepath.Join(t.TempDir(), "charts")
	res := runCLI(t, nil, "report", "--db", fx.db, "1", "--png", dir)
	if res.code != 0 {
		t.Fatalf("report --png: %d\n%s", res.code, res.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	// The fixture's run draws ops, p99, cache, pages, evict, tickets, cpu, disk.
	if len(files) < 6 || !strings.HasSuffix(files[0], "01-ops.png") || strings.Count(res.stderr, "wtd: wrote ") != len(files) {
		t.Fatalf("files %v\n%s", files, res.stderr)
	}
	if _, err := os.Stat("report.html"); err == nil {
		t.Error("--png without -o wrote report.html")
	}
	blue := color.RGBA{0x1f, 0x77, 0xb4, 0xff} // the first line's colour
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(in)
		in.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		b := img.Bounds()
		lines := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if near(img.At(x, y), blue) {
					lines++
				}
			}
		}
		if b.Dx() < 400 || b.Dy() < 200 || lines < 50 {
			t.Errorf("%s: %dx%d, %d pixels of the first line's colour", f, b.Dx(), b.Dy(), lines)
		}
	}

	res = runCLI(t, nil, "report", "--db", fx.db, "1", "--png", dir, "--chromium", "/nonexistent/chromium")
	if res.code != 2 || !strings.Contains(res.stderr, `--chromium "/nonexistent/chromium"`) {
		t.Errorf("a missing --chromium: %d\n%s", res.code, res.stderr)
	}
	t.Setenv("PATH", t.TempDir())
	res = runCLI(t, nil, "report", "--db", fx.db, "1", "--png", dir)
	if res.code != 2 || !strings.Contains(res.stderr, "apt-get install -y chromium") {
		t.Errorf("no Chromium on PATH: %d\n%s", res.code, res.stderr)
	}
}

func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, w uint8) bool { x := int(a>>8) - int(w); return x > -24 && x < 24 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}
