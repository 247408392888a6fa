package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/internal/ftdcedit"
)

// rates are the queries a second planted on serverFiles' files.
var rates = []int64{100, 102, 99, 80, 81, 79}

const import70 = "../../internal/ftdc/testdata/7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000"

// TestCompareAnIncidentHour imports two hours of a real 7.0 server with a
// query load planted on its samples (100 queries a second at 300 µs, then
// 70 at 450 µs) and compares the normal hour with the incident one through
// the CLI: both are slower, with their p-values, and the verdict says so.
func TestCompareAnIncidentHour(t *testing.T) {
	t.Parallel()
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

// serverFiles writes six files of one server from six 40-minute stretches
// of the real 7.0 file, each another process of it (pids 1001 to 1006)
// under a query load: the first three with --wiredTigerCacheSizeGB 2 and
// about 100 queries a second, the last three with 1 and about 80 (a cache
// halved, a throughput 20% lower). They go into dir as mongod names them.
func serverFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for i, rate := range rates {
		gb := int64(2)
		if i >= 3 {
			gb = 1
		}
		from := time.Duration(i) * 40 * time.Minute
		name := filepath.Join(dir, "metrics."+time.Date(2024, 4, 16, 11, 34, 43, 0, time.UTC).Add(from).Format("2006-01-02T15-04-05Z")+"-00000")
		queries := ftdcedit.Queries(func(time.Duration) (int64, int64) { return rate, 300 }, 5, int64(i))
		n, err := ftdcedit.Copy(import70, name, ftdcedit.Options{From: from, To: from + 40*time.Minute - time.Second, PID: int64(1001 + i),
			Metadata: ftdcedit.CacheSizeGB(float64(gb)),
			Sample: func(off time.Duration, s ftdcedit.Sample) {
				s.Set("serverStatus.wiredTiger.cache.maximum bytes configured", gb<<30)
				queries(off, s)
			}})
		if err != nil || n < 2390 {
			t.Fatalf("file %d: %d samples, %v", i, n, err)
		}
		out = append(out, name)
	}
	return out
}

// TestHistoryOfImportsFindsTheKnob imports six processes of one server,
// the cache halved at the fourth, and follows ops/s across them with wtd
// history: the fourth's step is labelled with what changed and still
// matches the others', the change point is at its run, a regression of
// about 20%, and the settings that changed there are named. Imported one
// file at a time (no label), history finds the same.
func TestHistoryOfImportsFindsTheKnob(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "diagnostic.data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := serverFiles(t, dir)
	env := map[string]string{"WTD_DB": filepath.Join(t.TempDir(), "wtd.db")}
	imp := runCLI(t, env, "import", dir)
	if imp.code != 0 || strings.Count(imp.stdout, "run ") != 6 {
		t.Fatalf("import: exit %d\n%s%s", imp.code, imp.stdout, imp.stderr)
	}
	show := runCLI(t, env, "show", "4")
	if !strings.Contains(show.stdout, "process (changed=cacheSizeGB=1)") {
		t.Errorf("run 4's step is not labelled with what changed:\n%s", show.stdout)
	}
	hist := runCLI(t, env, "history", "import:byron-ThinkCentre-M910q")
	t.Logf("wtd history import:byron-ThinkCentre-M910q\n%s", hist.stdout)
	for _, want := range []string{"ops/s of import:byron-ThinkCentre-M910q: 6 ok runs", "\nprocess\n", "6 values",
		"regression at run 4: -2", "settings changed there: cacheSizeGB=1 (was 2)"} {
		if !strings.Contains(hist.stdout, want) {
			t.Errorf("history lacks %q:\n%s%s", want, hist.stdout, hist.stderr)
		}
	}
	js := runCLI(t, env, "history", "import:byron-ThinkCentre-M910q", "--json")
	var h struct {
		Series []struct {
			Step    string
			Points  []struct{ Value *float64 }
			Changes []struct {
				Run       int64
				Kind      string
				ChangePct float64  `json:"change_pct"`
				Settings  []string `json:"settings_changed"`
			}
		}
	}
	if err := json.Unmarshal([]byte(js.stdout), &h); err != nil {
		t.Fatalf("--json: %v\n%s", err, js.stdout)
	}
	if len(h.Series) != 1 || h.Series[0].Step != "process" || len(h.Series[0].Points) != 6 || len(h.Series[0].Changes) != 1 {
		t.Fatalf("history %+v, want one series of 6 points with one change", h)
	}
	c := h.Series[0].Changes[0]
	if c.Run != 4 || c.Kind != "regression" || c.ChangePct > -15 || c.ChangePct < -25 || len(c.Settings) != 1 || c.Settings[0] != "cacheSizeGB=1 (was 2)" {
		t.Errorf("change %+v, want a regression of about 20%% at run 4 where cacheSizeGB went from 2 to 1", c)
	}
	for i, p := range h.Series[0].Points {
		if p.Value == nil || *p.Value < float64(rates[i])-1 || *p.Value > float64(rates[i])+1 {
			t.Errorf("run %d: ops/s %v, want about %d", i+1, p.Value, rates[i])
		}
	}
	// compare matches the process before the change with the one after.
	cmp := runCLI(t, env, "compare", "3", "4")
	if !strings.Contains(cmp.stdout, "verdict: slower in ops/s: process") || !strings.Contains(cmp.stdout, "│ -19.3% │ 2399/2399 │") {
		t.Errorf("compare 3 4:\n%s%s", cmp.stdout, cmp.stderr)
	}

	// One import per file: no label, the same change point.
	env2 := map[string]string{"WTD_DB": filepath.Join(t.TempDir(), "wtd.db")}
	for _, f := range files {
		if res := runCLI(t, env2, "import", f); res.code != 0 {
			t.Fatalf("import %s: exit %d\n%s", f, res.code, res.stderr)
		}
	}
	hist2 := runCLI(t, env2, "history", "import:byron-ThinkCentre-M910q")
	if !strings.Contains(hist2.stdout, "regression at run 4") || !strings.Contains(hist2.stdout, "settings changed there: cacheSizeGB=1 (was 2)") {
		t.Errorf("history of separate imports:\n%s%s", hist2.stdout, hist2.stderr)
	}
}
