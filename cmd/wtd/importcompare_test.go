package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/internal/ftdcedit"
)

const import70 = "../../internal/ftdc/testdata/7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000"

// TestCompareAnIncidentHour imports two hours of a real 7.0 server with a
// query load planted on its samples (100 queries a second at 300 µs, then
// 70 at 450 µs) and compares the normal hour with the incident one through
// the CLI: both are slower, with their p-values, and the verdict says so.
func TestCompareAnIncidentHour(t *testing.T) {
	env := map[string]string{"WTD_DB": filepath.Join(t.TempDir(), "wtd.db")}
	file := filepath.Join(t.TempDir(), "metrics.2024-04-16T11-34-42Z-00000")
	if _, err := ftdcedit.Copy(import70, file, ftdcedit.Options{To: 2 * time.Hour, Sample: ftdcedit.Queries(func(off time.Duration) (int64, int64) {
		if off >= time.Hour {
			return 70, 450
		}
		return 100, 300
	}, 5, 7)}); err != nil {
		t.Fatal(err)
	}
	imp := runCLI(t, env, "import", file, "--name", "prod",
		"--step", "normal=2024-04-16T11:34:43Z..2024-04-16T12:34:43Z", "--step", "incident=+1h..+2h")
	if imp.code != 0 || !strings.Contains(imp.stdout, "run 1: byron-ThinkCentre-M910q 7.0.0-rc6, 7201 samples") {
		t.Fatalf("import: exit %d\n%s%s", imp.code, imp.stdout, imp.stderr)
	}
	cmp := runCLI(t, env, "compare", "1@normal", "1@incident")
	t.Logf("wtd compare 1@normal 1@incident\n%s", cmp.stdout)
	for _, want := range []string{"normal vs incident", "verdict: slower in ops/s: normal vs incident",
		"│ write latency ms │         – │     38.5 │        – │"} {
		if !strings.Contains(cmp.stdout, want) {
			t.Errorf("compare lacks %q:\n%s%s", want, cmp.stdout, cmp.stderr)
		}
	}
	for _, m := range []string{"ops/s", "read latency ms"} {
		line := lineWith(cmp.stdout, "│ "+m+" ")
		if !strings.Contains(line, "3600/3600") || !strings.HasSuffix(strings.TrimRight(line, "│ "), "slower") {
			t.Errorf("%s: %q, want slower on 3600/3600 seconds", m, line)
		}
	}
	js := runCLI(t, env, "compare", "1@normal", "1@incident", "--json")
	var res []struct {
		Steps []struct {
			Verdict  string
			Measures []struct {
				Measure string
				A, B, P *float64
				Verdict string
			}
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &res); err != nil || len(res) != 1 || len(res[0].Steps) != 1 {
		t.Fatalf("--json: %v\n%s", err, js.stdout)
	}
	for _, m := range res[0].Steps[0].Measures {
		// The real server wrote once in the second hour, never in the
		// first: measured on one side only, not 0 on the other.
		if m.Measure == "write latency ms" && (m.A != nil || m.B == nil || m.Verdict != "not comparable") {
			t.Errorf("write latency %+v, want none in the normal hour (not 0) and not comparable", m)
		}
		if m.Measure == "ops/s" && (m.Verdict != "slower" || *m.P > 1e-6 || *m.A < 99.5 || *m.A > 100.5 || *m.B < 69.5 || *m.B > 70.5) {
			t.Errorf("ops/s %+v: a %v b %v p %v", m, *m.A, *m.B, *m.P)
		}
	}
}

// lineWith is the first line of s that contains what.
func lineWith(s, what string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, what) {
			return l
		}
	}
	return ""
}
