package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// testOpcounters returns serverStatus().opcounters.
func testOpcounters(t *testing.T, client *mongo.Client) map[string]int64 {
	t.Helper()
	raw, err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		t.Fatalf("serverStatus: %v", err)
	}
	out := map[string]int64{}
	for _, name := range []string{"query", "update", "insert"} {
		out[name] = testRawInt(t, raw, "opcounters", name)
	}
	return out
}

// testLoaded starts a server and loads docs documents of docBytes into
// bench.w.
func testLoaded(t *testing.T, docs int64, docBytes int) *mongo.Client {
	t.Helper()
	client, _ := startTestServer(t)
	if _, err := Load(context.Background(), client, LoadSpec{NS: "bench.w", Docs: docs, DocBytes: docBytes}, Hooks{}); err != nil {
		t.Fatal(err)
	}
	return client
}

func TestRunWorkloadMatchesOpcounters(t *testing.T) {
	const keys, docBytes = 2000, 512
	client := testLoaded(t, keys, docBytes)
	before := testOpcounters(t, client)
	var lastDone, lastTotal int64
	spec := Spec{NS: "bench.w", Ops: 3000, Threads: 3, Mix: Mix{Read: 5, Update: 3, Insert: 2},
		KeySpace: keys, DocBytes: docBytes, Seed: 1}
	res, err := Run(context.Background(), client, spec, Hooks{Progress: func(done, total int64) { lastDone, lastTotal = done, total }})
	if err != nil {
		t.Fatal(err)
	}
	after := testOpcounters(t, client)
	for op, counter := range map[string]string{OpRead: "query", OpUpdate: "update", OpInsert: "insert"} {
		st, ok := res.Ops[op]
		if !ok {
			t.Fatalf("no stats for %s in %v", op, res.Ops)
		}
		if delta := after[counter] - before[counter]; st.Count != delta {
			t.Errorf("%s: count %d, opcounters.%s moved by %d", op, st.Count, counter, delta)
		}
		if st.Errors != 0 {
			t.Errorf("%s: %d errors", op, st.Errors)
		}
		if st.Count < 300 || st.P50Micros <= 0 || st.P99Micros < st.P50Micros || st.MaxMicros < st.P99Micros || st.OpsPerSec <= 0 {
			t.Errorf("%s: implausible stats %+v", op, st)
		}
	}
	if res.Total.Count != 3000 || res.Total.Errors != 0 {
		t.Errorf("total count %d errors %d, want 3000 and 0", res.Total.Count, res.Total.Errors)
	}
	if lastDone != 3000 || lastTotal != 3000 {
		t.Errorf("last progress (%d, %d), want (3000, 3000)", lastDone, lastTotal)
	}
	inserts := res.Ops[OpInsert].Count
	if res.NextInsertID != keys+inserts {
		t.Errorf("next insert id %d, want %d", res.NextInsertID, keys+inserts)
	}
	// Updates keep the documents' size; inserts add documents of the same size.
	count, size := testCollStats(t, client, "bench", "w")
	if count != keys+inserts || size != (keys+inserts)*docBytes {
		t.Errorf("collStats count %d size %d, want %d and %d", count, size, keys+inserts, (keys+inserts)*docBytes)
	}
	perOp := map[string]int64{}
	for i, p := range res.Series {
		if p.Second != i {
			t.Fatalf("series point %d is second %d", i, p.Second)
		}
		for op, n := range p.Counts {
			perOp[op] += n
		}
	}
	for op, st := range res.Ops {
		if perOp[op] != st.Count {
			t.Errorf("%s: the series counts %d, the stats %d", op, perOp[op], st.Count)
		}
	}
	// Running again from NextInsertID must not collide with the first run.
	spec.InsertStartID, spec.Mix = res.NextInsertID, Mix{Insert: 1}
	spec.Ops = 100
	again, err := Run(context.Background(), client, spec, Hooks{})
	if err != nil || again.Ops[OpInsert].Count != 100 || len(again.Ops) != 1 {
		t.Errorf("second insert run: %v, ops %v", err, again.Ops)
	}
}

// testPads returns the pad of every document in bench.w by _id.
func testPads(t *testing.T, client *mongo.Client) map[int64]string {
	t.Helper()
	cur, err := client.Database("bench").Collection("w").Find(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(context.Background())
	pads := map[int64]string{}
	for cur.Next(context.Background()) {
		_, pad, _ := cur.Current.Lookup("pad").BinaryOK()
		pads[cur.Current.Lookup("_id").Int64()] = string(pad)
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return pads
}

func TestRunWorkloadZipfianWorkingSet(t *testing.T) {
	client := testLoaded(t, 1000, 64)
	before := testPads(t, client)
	spec := Spec{NS: "bench.w", Ops: 500, Mix: Mix{Update: 1}, KeySpace: 1000, WorkingSetKeys: 10,
		Distribution: DistZipfian, DocBytes: 64, Threads: 2}
	res, err := Run(context.Background(), client, spec, Hooks{})
	if err != nil || res.Total.Count != 500 || res.Total.Errors != 0 {
		t.Fatalf("err %v, total %+v", err, res.Total)
	}
	after := testPads(t, client)
	var changed []int64
	for id, pad := range after {
		if pad != before[id] {
			changed = append(changed, id)
		}
	}
	if len(after) != 1000 || len(changed) < 5 {
		t.Errorf("%d documents, %d of them updated; want 1000 and most of the 10 in the working set", len(after), len(changed))
	}
	for _, id := range changed {
		if id < 0 || id >= 10 {
			t.Errorf("_id %d was updated, outside the working set [0, 10)", id)
		}
	}
	if count, size := testCollStats(t, client, "bench", "w"); count != 1000 || size != 64000 {
		t.Errorf("collStats count %d size %d, want 1000 and 64000 (updates keep the size)", count, size)
	}
}

func TestRunWorkloadDuration(t *testing.T) {
	client := testLoaded(t, 1000, 256)
	spec := Spec{NS: "bench.w", Duration: 1200 * time.Millisecond, Threads: 2, Mix: Mix{Read: 1}, KeySpace: 1000}
	began := time.Now()
	res, err := Run(context.Background(), client, spec, Hooks{})
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if res.Elapsed < 1200*time.Millisecond || took > 2500*time.Millisecond {
		t.Errorf("elapsed %v (call took %v), want just over 1.2s", res.Elapsed, took)
	}
	if len(res.Series) != 2 || res.Series[0].Counts[OpRead] == 0 || res.Series[1].Counts[OpRead] == 0 {
		t.Errorf("series %+v, want 2 seconds with reads in both", res.Series)
	}
	if _, ok := res.Ops[OpUpdate]; ok || len(res.Ops) != 1 {
		t.Errorf("ops %v, want only read", res.Ops)
	}
	if p := res.Series[0].P99Micros[OpRead]; p <= 0 {
		t.Errorf("second 0: p99 %v", p)
	}

	// With both bounds the first reached ends the run.
	spec.Ops, spec.Duration = 50, time.Minute
	res, err = Run(context.Background(), client, spec, Hooks{})
	if err != nil || res.Total.Count != 50 || res.Elapsed > 10*time.Second {
		t.Errorf("ops 50 within a minute: err %v, count %d, elapsed %v", err, res.Total.Count, res.Elapsed)
	}
}

// TestRunWorkloadCancel: a workload cancelled once it has done some
// operations stops within seconds with the cancel's cause and a partial
// result.
func TestRunWorkloadCancel(t *testing.T) {
	client := testLoaded(t, 1000, 256)
	cause := errors.New("operator pressed ctrl-c")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// 50 operations of a half-and-half mix: both kinds, but for 2^-49.
	c := newCancelWhen(cancel, cause, func(done int64) bool { return done >= 50 })
	spec := Spec{NS: "bench.w", Duration: time.Minute, Threads: 4, Mix: Mix{Read: 1, Update: 1}, KeySpace: 1000, DocBytes: 256}
	res, err := stopsWithin(t, c, 3*time.Second, func() (Result, error) { return Run(ctx, client, spec, Hooks{Progress: c.progress}) })
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the cause %q", err, cause)
	}
	if res.Total.Count == 0 || res.Total.Errors != 0 || res.Ops[OpRead].Count == 0 || res.Ops[OpUpdate].Count == 0 {
		t.Errorf("partial result %+v: want some reads and updates and no errors", res.Ops)
	}
	if len(res.Series) == 0 {
		t.Error("no series in a partial result")
	}
}

func TestRunWorkloadAllFailing(t *testing.T) {
	client, _ := startTestServer(t) // an empty collection: every read misses
	spec := Spec{NS: "bench.none", Duration: 30 * time.Second, Threads: 2, Mix: Mix{Read: 1}, KeySpace: 1000}
	began := time.Now()
	res, err := Run(context.Background(), client, spec, Hooks{})
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("took %v to give up", took)
	}
	var all *AllFailingError
	if !errors.As(err, &all) || !errors.Is(err, errNoSuchDocument) || !strings.Contains(err.Error(), "read _id") {
		t.Fatalf("err = %v, want an AllFailingError quoting a missing read", err)
	}
	if res.Ops[OpRead].Errors == 0 || res.Ops[OpRead].Count != 0 {
		t.Errorf("read stats %+v, want errors only", res.Ops[OpRead])
	}
}

func TestWorkloadSpecErrors(t *testing.T) {
	good := Spec{NS: "db.c", Ops: 10, Mix: Mix{Read: 1, Update: 1}, KeySpace: 100, DocBytes: 100}
	tests := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"bad ns", func(s *Spec) { s.NS = "nodot" }, `ns "nodot" is not "db.collection"`},
		{"no bound", func(s *Spec) { s.Ops = 0 }, "ops 0 and duration 0s: one of them must be > 0"},
		{"negative ops", func(s *Spec) { s.Ops = -1 }, "ops -1 out of range [0, 2^63-1]"},
		{"negative duration", func(s *Spec) { s.Duration = -time.Second }, "duration_ns -1000000000 out of range"},
		{"threads", func(s *Spec) { s.Threads = 300 }, "threads 300 out of range [1, 256]"},
		{"empty mix", func(s *Spec) { s.Mix = Mix{} }, "mix has no operation"},
		{"negative weight", func(s *Spec) { s.Mix.Update = -1 }, "mix.update -1 out of range [0, +inf)"},
		{"no key space", func(s *Spec) { s.KeySpace = 0 }, "key_space 0 out of range [1, 2^63-1] (reads, updates, scans"},
		{"working set too big", func(s *Spec) { s.WorkingSetKeys = 101 }, "working_set_keys 101 out of range [1, 100]"},
		{"negative working set", func(s *Spec) { s.WorkingSetKeys = -1 }, "working_set_keys -1 out of range [1, 100]"},
		{"distribution", func(s *Spec) { s.Distribution = "pareto" }, `distribution "pareto" is not one of "uniform", "zipfian", "scrambled_zipfian", "latest" or "hotspot"`},
		{"hot fraction", func(s *Spec) { s.Distribution, s.HotFraction = DistHotspot, 2 }, "hot_fraction 2 out of range (0, 1]"},
		{"preset", func(s *Spec) { s.Workload = "ycsb-g" }, `workload "ycsb-g" is not a preset: use "ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e" or "ycsb-f"`},
		{"scan max", func(s *Spec) { s.Mix.Scan, s.ScanMax = 1, 200000 }, "scan_max 200000 out of range [1, 100000]"},
		{"query missing", func(s *Spec) { s.Mix.Query = 1 }, "the mix has queries but no query is given"},
		{"query unused", func(s *Spec) { s.Query = &QuerySpec{} }, "a query is given but the mix has no queries"},
		{"query count sort", func(s *Spec) {
			s.Mix.Query, s.Query = 1, &QuerySpec{Count: true, Sort: bson.D{{Key: "a", Value: 1}}}
		}, "query.sort has no meaning for a count"},
		{"query sentinel", func(s *Spec) {
			s.Mix.Query, s.Query = 1, &QuerySpec{Filter: bson.D{{Key: "a", Value: limitSlot}}}
		}, "a value wtd reserves"},
		{"negative rate", func(s *Spec) { s.Rate = -5 }, "rate -5 out of range (0, 10000000]"},
		{"rate and schedule", func(s *Spec) { s.Rate, s.RateSchedule = 5, []float64{1} }, "rate and rate_schedule both given"},
		{"schedule without step", func(s *Spec) { s.RateSchedule = []float64{1, 2} }, "a schedule of 2 rates needs a step > 0"},
		{"bad schedule rate", func(s *Spec) { s.RateSchedule, s.RateStep = []float64{1, 0}, time.Second }, "rate_schedule[2] 0 out of range"},
		{"step without schedule", func(s *Spec) { s.RateStep = time.Second }, "rate_step needs a rate schedule"},
		{"two warm-ups", func(s *Spec) { s.Warmup, s.WarmupOps = time.Second, 5 }, "warmup and warmup_ops both given"},
		{"negative warm-up", func(s *Spec) { s.WarmupOps = -5 }, "warmup_ops -5 out of range"},
		{"watch path", func(s *Spec) { s.Watch = []string{"a..b"} }, `watch: "a..b" is not a dotted serverStatus path`},
		{"doc bytes", func(s *Spec) { s.DocBytes = 0 }, "doc_bytes 0 out of range [32, 16777216]"},
		{"insert start", func(s *Spec) { s.InsertStartID = -5 }, "insert_start_id -5 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good
			tt.edit(&spec)
			_, err := Run(context.Background(), nil, spec, Hooks{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestWorkloadSpecDefaults(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want func(*workloadRun) bool
	}{
		{"insert only needs no key space", Spec{NS: "d.c", Ops: 1, Mix: Mix{Insert: 1}, DocBytes: 32},
			func(w *workloadRun) bool { return w.keys == nil && w.spec.InsertStartID == 0 && w.spec.Threads == 1 }},
		{"inserts start above the key space", Spec{NS: "d.c", Ops: 1, Mix: Mix{Insert: 1}, KeySpace: 7, DocBytes: 32},
			func(w *workloadRun) bool { return w.nextInsert.Load() == 7 }},
		{"read only needs no doc bytes", Spec{NS: "d.c", Ops: 1, Mix: Mix{Read: 1}, KeySpace: 7},
			func(w *workloadRun) bool { return w.spec.WorkingSetKeys == 7 && w.below[opRead] > 1 }},
		{"weights are normalised", Spec{NS: "d.c", Ops: 1, Mix: Mix{Read: 2, Update: 1, Insert: 1}, KeySpace: 7, DocBytes: 32},
			func(w *workloadRun) bool {
				return w.below[opRead] == 0.5 && w.below[opUpdate] == 0.75 && w.below[opInsert] > 1
			}},
		{"unused ops in between are never drawn", Spec{NS: "d.c", Ops: 1, Mix: Mix{Read: 1, RMW: 1}, KeySpace: 7, DocBytes: 32},
			func(w *workloadRun) bool {
				return w.below[opRead] == 0.5 && w.below[opUpdate] == 0.5 && w.below[opScan] == 0.5 && w.below[opRMW] > 1
			}},
		{"a scan length by default", Spec{NS: "d.c", Ops: 1, Mix: Mix{Scan: 1}, KeySpace: 7},
			func(w *workloadRun) bool { return w.spec.ScanMax == DefaultScanMax && w.scan != nil }},
		{"a query without keys needs no key space", Spec{NS: "d.c", Ops: 1, Mix: Mix{Query: 1}, Query: &QuerySpec{Count: true}},
			func(w *workloadRun) bool { return w.keys == nil && w.query != nil && len(w.query.keys) == 0 }},
		{"a schedule lasts its steps", Spec{NS: "d.c", Mix: Mix{Read: 1}, KeySpace: 7, RateSchedule: []float64{10, 20}, RateStep: time.Second},
			func(w *workloadRun) bool { return w.spec.Duration == 2*time.Second && w.sched != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workloadRun{}
			if _, _, err := w.check(tt.spec); err != nil {
				t.Fatal(err)
			}
			if !tt.want(w) {
				t.Errorf("unexpected run: spec %+v keys %v below %v", w.spec, w.keys, w.below)
			}
		})
	}
}

func TestWorkingSetKeys(t *testing.T) {
	tests := []struct {
		ws       float64
		unit     string
		keySpace int64
		avg      float64
		want     int64
		err      string
	}{
		{1, UnitFraction, 1000, 0, 1000, ""},
		{0.1, UnitFraction, 1000, 0, 100, ""},
		{0.5, "", 3, 0, 2, ""},
		{1e-9, UnitFraction, 1000, 0, 1, ""},
		{60, UnitMB, 600_000, 1000, 62915, ""}, // 60 MiB / 1000 B, rounded up
		{6000, UnitMB, 600_000, 1000, 600_000, ""},
		{0, UnitFraction, 1000, 0, 0, "working set 0 out of range (0, 1]"},
		{1.5, UnitFraction, 1000, 0, 0, "working set 1.5 out of range (0, 1]"},
		{-1, UnitMB, 1000, 1000, 0, "working set -1 MB out of range (0, +inf)"},
		{10, UnitMB, 1000, 0, 0, "average document size 0 bytes out of range"},
		{0.5, "GB", 1000, 1000, 0, `working set unit "GB" is not "fraction" or "MB"`},
		{0.5, UnitFraction, 0, 0, 0, "key space 0 out of range"},
	}
	for _, tt := range tests {
		got, err := WorkingSetKeys(tt.ws, tt.unit, tt.keySpace, tt.avg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("WorkingSetKeys(%v, %q, %d, %v): err %v, want %q", tt.ws, tt.unit, tt.keySpace, tt.avg, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("WorkingSetKeys(%v, %q, %d, %v) = %d, %v; want %d", tt.ws, tt.unit, tt.keySpace, tt.avg, got, err, tt.want)
		}
	}
}

// TestPreparedRunsOnce: Prepare fills in the defaults a caller needs
// before the run (threads), and a prepared workload refuses a second run,
// whose claimed operations would be used up.
func TestPreparedRunsOnce(t *testing.T) {
	client := testLoaded(t, 100, 64)
	p, err := Prepare(Spec{NS: "bench.w", Ops: 20, Mix: Mix{Read: 1}, KeySpace: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Spec(); got.Threads != 1 || got.InsertStartID != 100 || got.WorkingSetKeys != 100 {
		t.Errorf("prepared spec %+v: want threads 1, inserts from 100, the whole key space", got)
	}
	res, err := p.Run(context.Background(), client, Hooks{})
	if err != nil || res.Total.Count != 20 {
		t.Fatalf("first run: %v, %d ops", err, res.Total.Count)
	}
	if _, err := p.Run(context.Background(), client, Hooks{}); err == nil || !strings.Contains(err.Error(), "runs once") {
		t.Errorf("second run of one prepared workload: %v", err)
	}
}
