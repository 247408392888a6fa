package workload

import (
	"context"
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// testCommandCount returns serverStatus().opcounters.command.
func testCommandCount(t *testing.T, raw bson.Raw) int64 {
	t.Helper()
	return testRawInt(t, raw, "opcounters", "command")
}

func TestScans(t *testing.T) {
	const keys = 1000
	client := testLoaded(t, keys, 128)
	// One document per scan: each returns exactly one, whatever the key.
	res, err := Run(context.Background(), client, Spec{NS: "bench.w", Ops: 400, Threads: 2,
		Mix: Mix{Scan: 1}, KeySpace: keys, ScanMax: 1}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Ops[OpScan]; st.Count != 400 || st.Errors != 0 || st.Docs != 400 {
		t.Errorf("scans of 1: %+v, want 400 scans returning 400 documents", st)
	}
	// Lengths uniform in [1, 100] from keys in the first tenth: every
	// scan returns its full length, 50.5 on average.
	res, err = Run(context.Background(), client, Spec{NS: "bench.w", Ops: 2000, Threads: 2,
		Mix: Mix{Scan: 1}, KeySpace: keys, WorkingSetKeys: keys / 10, Seed: 3}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Ops[OpScan]
	mean := float64(st.Docs) / float64(st.Count)
	// The mean of 2000 draws of U{1..100}: standard deviation 0.64.
	if st.Count != 2000 || math.Abs(mean-50.5) > 3 {
		t.Errorf("scans up to 100: %d scans, %.1f documents each, want 2000 and about 50.5", st.Count, mean)
	}
}

func TestReadModifyWrites(t *testing.T) {
	client := testLoaded(t, 1000, 64)
	before, ops := testPads(t, client), testOpcounters(t, client)
	res, err := Run(context.Background(), client, Spec{NS: "bench.w", Ops: 300, Threads: 2,
		Mix: Mix{RMW: 1}, KeySpace: 1000, WorkingSetKeys: 20, DocBytes: 64}, Hooks{})
	if err != nil || res.Ops[OpRMW].Count != 300 || len(res.Ops) != 1 {
		t.Fatalf("err %v, ops %+v", err, res.Ops)
	}
	after := testOpcounters(t, client)
	if q, u := after["query"]-ops["query"], after["update"]-ops["update"]; q != 300 || u != 300 {
		t.Errorf("300 read-modify-writes moved opcounters by %d queries and %d updates, want 300 each", q, u)
	}
	changed := 0
	for id, pad := range testPads(t, client) {
		if pad != before[id] {
			changed++
			if id >= 20 {
				t.Errorf("_id %d changed, outside the working set", id)
			}
		}
	}
	if changed < 15 {
		t.Errorf("%d documents changed, want most of the 20 in the working set", changed)
	}
	if count, size := testCollStats(t, client, "bench", "w"); count != 1000 || size != 64000 {
		t.Errorf("collStats count %d size %d, want 1000 and 64000", count, size)
	}
}

func TestQueries(t *testing.T) {
	const keys = 500
	client := testLoaded(t, keys, 64)
	run := func(q QuerySpec, ops int64) Result {
		t.Helper()
		res, err := Run(context.Background(), client, Spec{NS: "bench.w", Ops: ops, Threads: 2,
			Mix: Mix{Query: 1}, KeySpace: keys, Query: &q, Seed: 5}, Hooks{})
		if err != nil || res.Ops[OpQuery].Count != ops || res.Ops[OpQuery].Errors != 0 {
			t.Fatalf("query %+v: err %v, stats %+v", q, err, res.Ops[OpQuery])
		}
		return res
	}
	status := func() bson.Raw {
		raw, err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}

	// A count of an unindexed field that no document has: a full scan
	// that counts nothing, one count command each.
	before := status()
	res := run(QuerySpec{Filter: bson.D{{Key: "tag", Value: KeyPlaceholder}}, Count: true}, 100)
	if d := res.Ops[OpQuery].Docs; d != 0 {
		t.Errorf("count of a missing field: %d documents", d)
	}
	if cmds := testCommandCount(t, status()) - testCommandCount(t, before); cmds < 100 {
		t.Errorf("100 counts moved opcounters.command by %d", cmds)
	}
	// _id <= $key counts key+1 documents: keys/2+0.5 on average.
	res = run(QuerySpec{Filter: bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: KeyPlaceholder}}}}, Count: true}, 1000)
	if mean := float64(res.Ops[OpQuery].Docs) / 1000; math.Abs(mean-250.5) > 20 {
		t.Errorf("count _id <= key: %.1f on average, want about 250.5", mean)
	}
	// A find sorted and limited, read to the end: min(3, keys-key)
	// documents; without a limit every document from the key up.
	res = run(QuerySpec{Filter: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: KeyPlaceholder}}}},
		Sort: bson.D{{Key: "_id", Value: -1}}, Limit: 3}, 300)
	if d := res.Ops[OpQuery].Docs; d < 890 || d > 900 {
		t.Errorf("find limited to 3: %d documents for 300 queries, want nearly 900", d)
	}
	res = run(QuerySpec{Filter: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: KeyPlaceholder}}}}}, 200)
	if mean := float64(res.Ops[OpQuery].Docs) / 200; math.Abs(mean-250.5) > 30 {
		t.Errorf("find _id >= key to the end of its cursor: %.1f documents on average, want about 250.5 (more than a batch)", mean)
	}
}

func TestPresets(t *testing.T) {
	want := map[string]struct {
		mix  Mix
		dist string
	}{
		"ycsb-a": {Mix{Read: 0.5, Update: 0.5}, DistScrambledZipfian},
		"ycsb-b": {Mix{Read: 0.95, Update: 0.05}, DistScrambledZipfian},
		"ycsb-c": {Mix{Read: 1}, DistScrambledZipfian},
		"ycsb-d": {Mix{Read: 0.95, Insert: 0.05}, DistLatest},
		"ycsb-e": {Mix{Scan: 0.95, Insert: 0.05}, DistScrambledZipfian},
		"ycsb-f": {Mix{Read: 0.5, RMW: 0.5}, DistScrambledZipfian},
	}
	if len(Presets) != len(want) {
		t.Errorf("%d presets, want %d", len(Presets), len(want))
	}
	for name, w := range want {
		s := Spec{Workload: name}
		if err := applyPreset(&s); err != nil {
			t.Fatal(err)
		}
		if s.Mix != w.mix || s.Distribution != w.dist {
			t.Errorf("%s: mix %+v distribution %s, want %+v %s", name, s.Mix, s.Distribution, w.mix, w.dist)
		}
		if name == "ycsb-e" && s.ScanMax != 100 {
			t.Errorf("ycsb-e: scan_max %d, want 100", s.ScanMax)
		}
	}
	// Field by field: what is given stays, the rest comes from the preset.
	s := Spec{Workload: "YCSB-E", Distribution: DistUniform, ScanMax: 10}
	if err := applyPreset(&s); err != nil || s.Mix != want["ycsb-e"].mix || s.Distribution != DistUniform || s.ScanMax != 10 {
		t.Errorf("ycsb-e with distribution and scan_max: %+v, %v", s, err)
	}
	s = Spec{Workload: "ycsb-a", Mix: Mix{Read: 1}}
	if err := applyPreset(&s); err != nil || s.Mix != (Mix{Read: 1}) || s.Distribution != DistScrambledZipfian {
		t.Errorf("ycsb-a with a mix: %+v, %v", s, err)
	}
	s = Spec{Workload: "ycsb-b", Distribution: DistZipfian}
	if err := applyPreset(&s); err != nil || s.Distribution != DistZipfian {
		t.Errorf("ycsb-b with the plain zipfian: %+v, %v", s, err)
	}
}

// TestPresetsRun runs every preset against one server and checks that
// each ran its operations in its proportions.
func TestPresetsRun(t *testing.T) {
	const keys, ops = 2000, 1000
	client := testLoaded(t, keys, 256)
	next := int64(keys)
	for _, p := range Presets {
		res, err := Run(context.Background(), client, Spec{NS: "bench.w", Workload: p.Name, Ops: ops, Threads: 2,
			KeySpace: next, DocBytes: 256, Seed: 7}, Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		w := p.Mix.weights()
		var sum float64
		for _, v := range w {
			sum += v
		}
		for op, v := range w {
			st, ok := res.Ops[opNames[op]]
			if v == 0 {
				if ok {
					t.Errorf("%s ran %s", p.Name, opNames[op])
				}
				continue
			}
			share := float64(st.Count) / ops
			if st.Errors != 0 || !within(share, v/sum, ops) {
				t.Errorf("%s: %s share %.3f (%d errors), want %.2f", p.Name, opNames[op], share, st.Errors, v/sum)
			}
		}
		if res.Workload != p.Name || res.Distribution != p.Distribution {
			t.Errorf("%s: result says workload %q distribution %q", p.Name, res.Workload, res.Distribution)
		}
		next = res.NextInsertID
	}
}

// TestLatestReadsNewInserts: with the latest distribution the newest key
// follows the run's own inserts, and no read asks for a document whose
// insert is still in flight (not one read misses).
func TestLatestReadsNewInserts(t *testing.T) {
	const keys = 1000
	client := testLoaded(t, keys, 64)
	spec := Spec{NS: "bench.w", Ops: 3000, Threads: 2, Mix: Mix{Read: 1, Insert: 1}, Distribution: DistLatest,
		KeySpace: keys, DocBytes: 64, Seed: 2}
	w, err := newWorkloadRun(client, spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.run(context.Background())
	if err != nil || res.Ops[OpRead].Errors != 0 || res.Ops[OpInsert].Errors != 0 {
		t.Fatalf("err %v, ops %+v", err, res.Ops)
	}
	newest, items := w.keys.latest.current()
	if inserted := res.Ops[OpInsert].Count; newest != keys+inserted-1 || items != uint64(keys+inserted) {
		t.Errorf("after %d inserts the newest key is %d of %d keys, want %d of %d", inserted, newest, items, keys+inserted-1, keys+inserted)
	}
}
