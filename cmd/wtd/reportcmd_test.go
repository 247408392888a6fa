package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	fx := recordedRuns(t)
	out := filepath.Join(t.TempDir(), "r.html")
	res := runCLI(t, nil, "report", "--db", fx.db, "latest:fixture", "1", "-o", out)
	if res.code != 0 || !strings.Contains(res.stderr, "wrote "+out) {
		t.Fatalf("report: %+v", res)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"wtd report: run 3 and run 1", "<h2>Run 1 compared with run 3</h2>", "parameter docs: 2000 and 3000",
		`id="chart-ops"`, `id="chart-cache"`, "│ fixture table"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if res := runCLI(t, nil, "report", "--db", fx.db, "2", "-o", "-"); res.code != 0 || !strings.HasPrefix(res.stdout, "<!DOCTYPE html>") {
		t.Errorf("report -o -: exit %d, %.40q", res.code, res.stdout)
	}
	for _, args := range [][]string{{"9"}, {"1", "--format", "png"}, {"1", "-o", filepath.Join(t.TempDir(), "no", "dir", "r.html")}} {
		if res := runCLI(t, nil, append([]string{"report", "--db", fx.db}, args...)...); res.code != 2 {
			t.Errorf("report %v: exit %d", args, res.code)
		}
	}
}
