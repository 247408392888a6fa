package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
)

// roundTripPlaybook loads and reads a minimongod on the dbpath -p dbpath=
// names, idling a few seconds between, so that its counters stand still
// for a while and move for a while.
const roundTripPlaybook = `
local p = params{ dbpath = "" }
local m = mongod.start{ dbpath = p.dbpath, cacheSizeGB = 0.25 }
sleep(4)
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = 3000, doc_bytes = 300 } end }
sleep(4)
step{ name = "reads", run = function()
  return m:workload{ ns = "t.c", ops = 2000, mix = { read = 1 }, working_set = 1.0 }
end }
sleep(4)
m:stop()
`

// TestImportOfMinimongodsDiagnosticData runs a playbook against a
// minimongod that wtd samples each second, then imports the
// diagnostic.data the server wrote meanwhile, and checks the two records
// of each counter against each other sample for sample. The two samples of
// a second are not taken at the same instant; but a counter only grows, so
// wtd's value at instant t lies between the server's own values at its
// last sample at least 100 ms before t and its first at least 100 ms after
// (the margin covers the time a serverStatus takes), and equals them when
// they are equal: the counter stood still across the second.
func TestImportOfMinimongodsDiagnosticData(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	dbpath := filepath.Join(t.TempDir(), "db")
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, roundTripPlaybook)
	res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, "--sample-interval", "1s", "--allow-dir", filepath.Dir(dbpath),
		pb, "-p", "dbpath="+dbpath)
	if res.code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	imp := runCLI(t, nil, "import", "--db", db, filepath.Join(dbpath, "diagnostic.data"))
	t.Logf("wtd import\n%s%s", imp.stdout, imp.stderr)
	if imp.code != exitOK || !strings.Contains(imp.stdout, "run 2: ") {
		t.Fatalf("import: exit %d\n%s%s", imp.code, imp.stdout, imp.stderr)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	all := func(run int64) []store.Sample {
		s, err := st.Samples(ctx, run, "server:m1", time.Time{}, time.Now().Add(time.Hour))
		if err != nil || len(s) < 10 {
			t.Fatalf("run %d: %d samples (%v)", run, len(s), err)
		}
		return s
	}
	sampled, imported := all(1), all(2)
	t.Logf("wtd sampled %d times (%s .. %s), the server's diagnostic.data holds %d samples (%s .. %s)",
		len(sampled), sampled[0].TS.Format("15:04:05.000"), sampled[len(sampled)-1].TS.Format("15:04:05.000"),
		len(imported), imported[0].TS.Format("15:04:05.000"), imported[len(imported)-1].TS.Format("15:04:05.000"))
	// About one a second each, over the same seconds.
	if d := imported[len(imported)-1].TS.Sub(imported[0].TS).Seconds(); float64(len(imported)) < d-2 || float64(len(imported)) > d+2 {
		t.Errorf("%d imported samples over %.1f s, want one a second", len(imported), d)
	}
	margin := 100 * time.Millisecond
	for _, metric := range []string{"opcounters.insert", "opcounters.query", "opcounters.command", "network.bytesIn",
		"wiredTiger.cache.pages requested from the cache"} {
		exact, between := 0, 0
		for _, w := range sampled {
			v, ok := w.Metrics[metric]
			if !ok {
				continue
			}
			i := sort.Search(len(imported), func(i int) bool { return !imported[i].TS.Before(w.TS.Add(-margin)) }) - 1
			j := sort.Search(len(imported), func(i int) bool { return !imported[i].TS.Before(w.TS.Add(margin)) })
			if i < 0 || j >= len(imported) {
				continue // before the server's first sample or after its last
			}
			lo, ok1 := imported[i].Metrics[metric]
			hi, ok2 := imported[j].Metrics[metric]
			if !ok1 || !ok2 {
				t.Fatalf("%s: not in the imported samples at %s and %s", metric, imported[i].TS, imported[j].TS)
			}
			switch {
			case lo == hi && v == lo:
				exact++
			case lo <= v && v <= hi:
				between++
			default:
				t.Errorf("%s: wtd sampled %v at %s; the server recorded %v at %s and %v at %s", metric, v,
					w.TS.Format("15:04:05.000"), lo, imported[i].TS.Format("15:04:05.000"), hi, imported[j].TS.Format("15:04:05.000"))
			}
		}
		t.Logf("%s: %d seconds equal, %d between the server's samples around them", metric, exact, between)
		if metric != "opcounters.command" && metric != "network.bytesIn" && exact < 3 {
			// The idle seconds before, between and after the steps.
			t.Errorf("%s: %d seconds compared equal, want the idle ones", metric, exact)
		}
		if exact+between < len(sampled)/2 {
			t.Errorf("%s: %d of wtd's %d samples compared", metric, exact+between, len(sampled))
		}
	}
	// The load's 3000 inserts are in both, at the end.
	last := func(s []store.Sample) string { return fmt.Sprint(s[len(s)-1].Metrics["opcounters.insert"]) }
	if last(sampled) != "3000" || last(imported) != "3000" {
		t.Errorf("inserts at the end: wtd %s, diagnostic.data %s; want 3000", last(sampled), last(imported))
	}
}
