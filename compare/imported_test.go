package compare

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"wtd/engine/ftdcimport"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/ftdcedit"
)

// file70 is a real mongod 7.0 (internal/ftdc/testdata/SOURCES.md): 19,007
// samples over 5 h 17 min of an idle server.
const file70 = "../internal/ftdc/testdata/7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000"

// importWindows imports path with the windows given as offsets and returns
// the steps of its run by name.
func importWindows(t *testing.T, path string, windows ...ftdcimport.Window) (*record.Record, map[string]record.StepRecord) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	rep, err := ftdcimport.Import(ctx, st, []string{path}, ftdcimport.Options{Windows: windows})
	if err != nil || len(rep.Runs) != 1 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
	rec, err := record.LoadSteps(ctx, st, rep.Runs[0].Run)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]record.StepRecord{}
	for _, s := range rec.Steps {
		by[s.Name] = s
	}
	return rec, by
}

func window(name string, from, to time.Duration) ftdcimport.Window {
	return ftdcimport.Window{Name: name, Offsets: true, FromOff: from, ToOff: to}
}

// compareSteps compares step b with step a of one run, as wtd compare
// RUN@A RUN@B does.
func compareSteps(rec *record.Record, a, b record.StepRecord) *Result {
	ra, rb := *rec, *rec
	a.Name, a.Labels, b.Name, b.Labels = "a vs b", nil, "a vs b", nil
	ra.Steps, rb.Steps = []record.StepRecord{a}, []record.StepRecord{b}
	return Records(&ra, &rb, Options{})
}

func rowsByMeasure(t *testing.T, r *Result) map[string]MeasureRow {
	t.Helper()
	if len(r.Steps) != 1 {
		t.Fatalf("%d rows, want one: %+v", len(r.Steps), r)
	}
	out := map[string]MeasureRow{}
	for _, m := range r.Steps[0].Measures {
		out[m.Measure] = m
	}
	return out
}

// TestImportedWindowsOfAnIdleServer compares two hours of the real 7.0
// file: the same 36 operations an hour (its own commands) is no
// difference, tested on 3,600 seconds a side; the cache's level is tested
// too (higher, a neutral measure); what no second measured (no read
// finished) is left out, not shown as 0.
func TestImportedWindowsOfAnIdleServer(t *testing.T) {
	rec, steps := importWindows(t, file70, window("a", 0, time.Hour), window("b", 2*time.Hour, 3*time.Hour))
	res := compareSteps(rec, steps["a"], steps["b"])
	if !res.Comparable {
		t.Fatalf("windows of one run not comparable: %v", res.Reasons)
	}
	rows := rowsByMeasure(t, res)
	ops := rows["ops/s"]
	if ops.Verdict != NoDifference || ops.P == nil || *ops.P < 0.05 || ops.NA != 3600 || ops.NB != 3600 ||
		*ops.A != 0.01 || *ops.B != 0.01 {
		t.Errorf("ops/s %+v, want no difference at 0.01 ops/s, tested on 3600/3600 seconds", ops)
	}
	if res.Steps[0].Verdict != NoDifference {
		t.Errorf("row verdict %q, want no difference", res.Steps[0].Verdict)
	}
	cache := rows["cache MB"]
	if cache.Verdict != Higher || cache.P == nil || *cache.P >= 0.05 || cache.NA != 3600 || *cache.A < 0.18 || *cache.B < *cache.A {
		t.Errorf("cache MB %+v, want higher, tested on 3600 seconds a side", cache)
	}
	for _, m := range []string{"read latency ms", "write latency ms"} {
		if r, ok := rows[m]; ok {
			t.Errorf("%s %+v: no operation finished, want no row", m, r)
		}
	}
	if r := rows["pages read/s"]; r.Verdict != NoDifference || r.A == nil || *r.A != 0 || r.NA != 3600 {
		t.Errorf("pages read/s %+v, want measured as 0 (the counter stood still) and no difference", r)
	}
}

// plantLoad copies the real 7.0 file's first two hours with a query load
// planted on top of its samples: in the first hour 100 queries a second
// taking 300 µs each, in the second 70 a second taking 450 µs (a few
// queries of noise either way, each second).
func plantLoad(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "metrics.2024-04-16T11-34-42Z-00000")
	n, err := ftdcedit.Copy(file70, dst, ftdcedit.Options{To: 2 * time.Hour, Sample: ftdcedit.Queries(func(off time.Duration) (int64, int64) {
		if off >= time.Hour {
			return 70, 450
		}
		return 100, 300
	}, 5, 7)})
	if err != nil || n != 7201 {
		t.Fatalf("planted file: %d samples, %v; want 7201", n, err)
	}
	return dst
}

// TestImportedWindowsPlantedIncident compares an hour of normal load with
// an hour of incident planted on a real server's samples: 30% fewer
// operations is slower, 50% more latency per read is slower, with the
// p-value of 3,600 seconds a side; the cache the real server reported did
// not change (no difference of 5% or more).
func TestImportedWindowsPlantedIncident(t *testing.T) {
	rec, steps := importWindows(t, plantLoad(t), window("normal", 0, time.Hour), window("incident", time.Hour, 2*time.Hour))
	res := compareSteps(rec, steps["normal"], steps["incident"])
	rows := rowsByMeasure(t, res)
	ops, lat := rows["ops/s"], rows["read latency ms"]
	if ops.Verdict != Slower || ops.P == nil || *ops.P > 1e-6 || ops.NA < 3599 || ops.NB < 3599 ||
		*ops.A < 99.5 || *ops.A > 100.5 || *ops.B < 69.5 || *ops.B > 70.5 {
		t.Errorf("ops/s %+v (a %v b %v), want slower, 100 -> 70", ops, *ops.A, *ops.B)
	}
	// The real server's own few reads are in the means too.
	if lat.Verdict != Slower || lat.P == nil || *lat.P > 1e-6 || math.Abs(*lat.A-0.3) > 0.001 || math.Abs(*lat.B-0.45) > 0.001 ||
		*lat.ChangePct < 49.5 || *lat.ChangePct > 50.5 {
		t.Errorf("read latency %+v (a %v b %v), want slower, 0.3 -> 0.45 ms", lat, *lat.A, *lat.B)
	}
	if res.Steps[0].Verdict != Slower {
		t.Errorf("row verdict %q, want slower", res.Steps[0].Verdict)
	}
	if slower, _ := res.SlowerFaster(); len(slower) != 1 || slower[0] != "a vs b" {
		t.Errorf("slower steps %v", slower)
	}
	if c := rows["cache MB"]; c.Verdict != NoDifference && !c.Small {
		t.Errorf("cache MB %+v, want no difference of 5%% or more", c)
	}
	// Pages read per operation: none read, over all the step's operations.
	if p := rows["pages read/op"]; p.A == nil || *p.A != 0 {
		t.Errorf("pages read/op %+v, want 0 over the planted operations", p)
	}
}
