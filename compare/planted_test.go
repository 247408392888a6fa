package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
)

// plantedRun is a run recorded through the store's API with figures a test
// chose: its playbook, parameters, host, servers and steps.
type plantedRun struct {
	path, text string
	params     map[string]any
	host       store.HostFacts
	servers    []store.ServerRecord
	steps      []plantedStep
}

// plantedStep is a step of a planted run: its result (an
// workload.Result or workload.LoadResult) and server deltas recorded
// as a run records them.
type plantedStep struct {
	name   string
	labels map[string]any
	status string // "" is ok
	result any
	server *record.ServerDeltas
	host   *record.HostLoad
}

// record writes r into st as a finished ok run and returns its id.
func (r plantedRun) record(t *testing.T, st *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: r.path, Playbook: r.text, Params: r.params, StartedAt: start, Host: r.host})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.servers {
		if err := st.AddServer(ctx, id, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range r.steps {
		sid, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: s.name, Labels: s.labels, StartedAt: start})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(map[string]any{"result": s.result, "server": s.server, "host_load": s.host})
		if err != nil {
			t.Fatal(err)
		}
		status := s.status
		if status == "" {
			status = store.StatusOK
		}
		if err := st.FinishStep(ctx, sid, store.StepResult{Status: status, Results: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	return id
}

// newStore opens a new results database in a test's temporary directory.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	return st
}

// wiggle is a small fixed variation (0.98 to 1.02) so that planted values
// are not all tied.
func wiggle(i int) float64 { return 1 + 0.01*float64(i%5-2) }

// seconds are n per-second points from second first on: ops operations
// a second and a p99 of p99 µs (each wiggled), marked warm-up or not.
func seconds(first, n int, ops, p99 float64, warmup bool) []workload.SecondPoint {
	out := make([]workload.SecondPoint, n)
	for i := range out {
		s := first + i
		out[i] = workload.SecondPoint{Second: s, Counts: map[string]int64{"read": int64(ops * wiggle(s))},
			P99Micros: map[string]float64{"read": p99 * wiggle(s+1)}, Warmup: warmup}
	}
	return out
}

// readsResult is a read workload's result: warm seconds of warm-up at
// warmOps and warmP99, then full seconds at ops and p99, then a partial
// second; its totals are opsPerSec, p50 and p99.
func readsResult(full int, ops, p50, p99 float64, warm int, warmOps, warmP99 float64) workload.Result {
	series := seconds(0, warm, warmOps, warmP99, true)
	series = append(series, seconds(warm, full, ops, p99, false)...)
	series = append(series, seconds(warm+full, 1, ops/3, p99, false)...)
	total := workload.OpStats{Count: int64(float64(full) * ops), OpsPerSec: ops, P50Micros: p50, P99Micros: p99}
	return workload.Result{Elapsed: time.Duration(full) * time.Second, Ops: map[string]workload.OpStats{"read": total},
		Total: total, Series: series, Mix: workload.Mix{Read: 1}}
}

func ptr(v float64) *float64 { return &v }

// Baseline figures of a planted step (slowdown 1).
const (
	readOps        = 10000.0 // reads per second
	readP50        = 300.0   // µs
	readP99        = 800.0   // µs
	pagesPerOp     = 0.5
	cachePeak      = 100e6   // bytes
	dirtyPeak      = 20e6    // bytes
	appEvict       = 5000.0  // µs
	loadDocs       = 20000.0 // documents per second
	batchP50       = 2000.0  // µs
	batchP99       = 5000.0  // µs
	plantedSeconds = 20      // full seconds of each planted reads step
)

// roundSteps are rounds of a load then reads (seq 2r-1 and 2r in round
// r), slowdown times slower than the baseline figures: throughput divided
// by it; latencies, pages read per operation, eviction time and the cache
// peak multiplied by it; the dirty peak divided by it. Each round's
// figures are wiggled a little.
func roundSteps(rounds int, slowdown float64) []plantedStep {
	var out []plantedStep
	for r := 1; r <= rounds; r++ {
		w := wiggle(r)
		load := workload.LoadResult{Docs: 10000, DocsPerSec: loadDocs / slowdown * w,
			Batch: workload.OpStats{Count: 10, P50Micros: batchP50 * slowdown * w, P99Micros: batchP99 * slowdown * w}}
		res := readsResult(plantedSeconds, readOps/slowdown*w, readP50*slowdown*w, readP99*slowdown*w, 0, 0, 0)
		pages := pagesPerOp * slowdown * w
		deltas := &record.ServerDeltas{PagesRead: ptr(pages * float64(res.Total.Count)),
			CacheUsedPeak: ptr(cachePeak * slowdown * w), DirtyPeak: ptr(dirtyPeak / slowdown * w), AppEvictMicros: ptr(appEvict * slowdown * w)}
		out = append(out,
			plantedStep{name: "load", labels: map[string]any{"round": r}, result: load},
			plantedStep{name: "reads", labels: map[string]any{"round": r}, result: res, server: deltas})
	}
	return out
}

// nightly is a planted run of playbooks/nightly.lua on a started mongod
// 7.0.2 and a 2-core 8 GiB host, with steps.
func nightly(steps []plantedStep) plantedRun {
	return plantedRun{path: "playbooks/nightly.lua", text: "-- nightly reads\n", params: map[string]any{"docs": 1000},
		host:    store.HostFacts{Cores: 2, MemoryBytes: 8 << 30, Kernel: "6.1.0"},
		servers: []store.ServerRecord{{Name: "mongod", Started: true, Binary: "/usr/bin/mongod", URI: "mongodb://127.0.0.1:27017", Version: "7.0.2", GitVersion: "abc123"}},
		steps:   steps}
}

// A difference the test finds is a verdict only when the change reaches
// MinChange: a 3% slower run is "no difference" (below the default 5%,
// marked Small) although p is tiny; with MinChange 2% it is slower, and
// with none (below 0) too; a 2x slower run is slower either way.
func TestMinChangeDecides(t *testing.T) {
	st := newStore(t)
	base := nightly(roundSteps(3, 1)).record(t, st)
	little := nightly(roundSteps(3, 1.03)).record(t, st)
	double := nightly(roundSteps(3, 2)).record(t, st)
	ctx := context.Background()
	for _, c := range []struct {
		b         int64
		minChange float64
		want      string
		small     bool
	}{
		{little, 0, NoDifference, true},
		{little, 0.02, Slower, false},
		{little, -1, Slower, false},
		{double, 0, Slower, false},
		{double, 0.5, Slower, false},
	} {
		res, err := Runs(ctx, st, base, c.b, Options{MinChange: c.minChange})
		if err != nil {
			t.Fatal(err)
		}
		var row *MeasureRow
		for _, s := range res.Steps {
			if s.Name == "reads" && s.Rounds {
				for i := range s.Measures {
					if s.Measures[i].Measure == "ops/s" {
						row = &s.Measures[i]
					}
				}
			}
		}
		if row == nil {
			t.Fatalf("no ops/s row of reads over rounds in %+v", res.Steps)
		}
		if row.Verdict != c.want || row.Small != c.small || row.P == nil || *row.P >= 0.001 {
			t.Errorf("run %d min change %g: verdict %s small %v p %v; want %s small %v with p < 0.001", c.b, c.minChange, row.Verdict, row.Small, row.P, c.want, c.small)
		}
		wantMin := c.minChange
		if wantMin == 0 {
			wantMin = DefaultMinChange
		} else if wantMin < 0 {
			wantMin = 0
		}
		if res.MinChange != wantMin {
			t.Errorf("result's min change %g, want %g", res.MinChange, wantMin)
		}
	}
}

// A step whose host was busy with other work keeps its verdict, but says
// it is not reliable: in the row (host_busy), in its cells and in a
// verdict line naming the run and how busy its host was.
func TestBusyHostMakesAVerdictUnreliable(t *testing.T) {
	st := newStore(t)
	base := nightly(roundSteps(3, 1)).record(t, st)
	busySteps := roundSteps(3, 2)
	load, cores, others := 7.4, 2.0, 61.0
	for i := range busySteps {
		if busySteps[i].name == "reads" {
			busySteps[i].host = &record.HostLoad{Samples: 20, Load1: &load, Cores: &cores, OthersCPUPct: &others}
		}
	}
	busy := nightly(busySteps).record(t, st)
	quiet := nightly(roundSteps(3, 2)).record(t, st)
	res, err := Runs(context.Background(), st, base, busy, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var reads *StepRow
	for i := range res.Steps {
		if res.Steps[i].Name == "reads" && res.Steps[i].Rounds {
			reads = &res.Steps[i]
		}
	}
	want := fmt.Sprintf("run %d (load 7.4 on 2 cores, 61%% CPU by other processes)", busy)
	if reads == nil || reads.Verdict != Slower || len(reads.HostBusy) != 1 || reads.HostBusy[0] != want || reads.Reliable() {
		t.Fatalf("reads over rounds: %+v, want slower with host busy %q", reads, want)
	}
	if got := res.CellVerdict(*reads, reads.Measures[0]); got != "slower (not reliable)" {
		t.Errorf("ops/s cell: %q", got)
	}
	var line string
	for _, l := range res.VerdictLines() {
		if l.Kind == NotReliable {
			line = l.Text
		}
	}
	if line != "host busy during "+want+": verdict not reliable" {
		t.Errorf("verdict lines %+v lack the busy host", res.VerdictLines())
	}
	calm, err := Runs(context.Background(), st, base, quiet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range calm.Steps {
		if !s.Reliable() {
			t.Errorf("quiet run: step %s host busy %v", s.Step, s.HostBusy)
		}
	}
}
