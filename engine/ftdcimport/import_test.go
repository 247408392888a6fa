package ftdcimport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/ftdc"
)

const testdata = "../../internal/ftdc/testdata/"

// Real files (internal/ftdc/testdata/SOURCES.md says what each is).
const (
	file326  = testdata + "3.2.6/ASTPMeetup+HemiNotes_3.2.01--metrics.2017-03-05T20-37-30Z-00000"
	file406  = testdata + "4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000"
	file507  = testdata + "5.0.7/faisallarai+meou-manisfests--metrics.2022-04-19T23-27-34Z-00000"
	file70   = testdata + "7.0.0-rc6/b1ron+ftdc--metrics.2025-07-10T15-58-48Z-00000"
	file70a  = testdata + "7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000"
	file7012 = testdata + "7.0.12/Kschellens+Cours_NoSQL--metrics.2024-07-16T07-41-04Z-00000"
	file80   = testdata + "8.0.8/gadu04+MongoDB-Sharding--metrics.2025-04-22T08-13-01Z-00000"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// TestNamesAreTheSamplers checks, chunk by chunk, that the serverStatus
// metrics stored are exactly the fields engine.FlattenNumbers gives for the
// same serverStatus (the sampler's names), with its values (FTDC keeps
// doubles as integers).
func TestNamesAreTheSamplers(t *testing.T) {
	for _, path := range []string{file326, file406, file70, file80} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			r, err := ftdc.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			chunks := 0
			for {
				it, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				c, ok := it.(*ftdc.Chunk)
				if !ok {
					continue
				}
				chunks++
				flat := engine.FlattenNumbers(serverStatus(c.Ref))
				delete(flat, "start")
				delete(flat, "end")
				if len(flat) < 500 {
					t.Fatalf("chunk %s: serverStatus has %d numeric fields, want a real one's hundreds", c.ID, len(flat))
				}
				nm := newNameMap(c)
				got := map[string]bool{}
				for i, n := range nm.names {
					if n == "" || !strings.HasPrefix(c.Names[i], ServerStatusPrefix) {
						continue
					}
					got[n] = true
					want, ok := flat[n]
					if !ok {
						t.Fatalf("chunk %s: stored %q, which the sampler does not have", c.ID, n)
					}
					if v := c.Metric(i)[0]; float64(v) != float64(int64(want)) {
						t.Errorf("chunk %s: %q = %d in FTDC, %v in serverStatus", c.ID, n, v, want)
					}
				}
				for n := range flat {
					if !got[n] {
						t.Errorf("chunk %s: the sampler has %q, the import does not", c.ID, n)
					}
				}
				if !got["wiredTiger.cache.bytes currently in the cache"] && !strings.Contains(path, "mongos") {
					t.Errorf("chunk %s: no wiredTiger.cache.bytes currently in the cache", c.ID)
				}
			}
			if chunks == 0 {
				t.Fatal("no chunk read")
			}
		})
	}
}

type want struct {
	path    string
	runs    int
	samples []int64
	version string
	replSet string
	skip    string // in the first run's Skipped
}

func TestImportRealFiles(t *testing.T) {
	for _, w := range []want{
		{path: file326, runs: 1, samples: []int64{1190}, version: "3.2.6", skip: "truncated document"},
		{path: file406, runs: 1, samples: []int64{307}, version: "4.0.6", replSet: "rs0"},
		// The previous process's interim chunk, written after the new
		// process's metadata, is its own run.
		{path: file507, runs: 2, samples: []int64{171, 2442}, version: "5.0.7", replSet: "rs0"},
		{path: file7012, runs: 1, samples: []int64{1825}, version: "7.0.12", replSet: "rs0"},
		{path: file80, runs: 1, samples: []int64{2111}, version: "8.0.8", replSet: "configReplSet"},
	} {
		t.Run(filepath.Base(filepath.Dir(w.path)), func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			rep, err := Import(ctx, st, []string{w.path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Runs) != w.runs {
				t.Fatalf("%d runs, want %d: %+v", len(rep.Runs), w.runs, rep.Runs)
			}
			for i, res := range rep.Runs {
				if res.Samples != w.samples[i] {
					t.Errorf("run %d: %d samples, want %d", i, res.Samples, w.samples[i])
				}
				n, err := st.SourceSampleCount(ctx, res.Run, "server:m1")
				if err != nil || n != res.Samples {
					t.Errorf("run %d: the store has %d samples (%v), the import says %d", i, n, err, res.Samples)
				}
				if res.Version != w.version {
					t.Errorf("run %d: version %q, want %q", i, res.Version, w.version)
				}
				checkRun(t, st, res, w, i == len(rep.Runs)-1)
			}
			if w.skip != "" && (len(rep.Runs[0].Skipped) != 1 || !strings.Contains(rep.Runs[0].Skipped[0], w.skip)) {
				t.Errorf("skipped %q, want one skip saying %q", rep.Runs[0].Skipped, w.skip)
			}
			if w.skip == "" && len(rep.Runs[0].Skipped) != 0 {
				t.Errorf("skipped %q, want none", rep.Runs[0].Skipped)
			}

			again, err := Import(ctx, st, []string{w.path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Runs) != 0 || len(again.Known) != 1 || again.Known[0].Prev.Runs[0] != rep.Runs[0].Run {
				t.Errorf("imported again: %d runs, known %+v; want none made and the file known", len(again.Runs), again.Known)
			}
			runs, _ := st.ListRuns(ctx, 0)
			if len(runs) != w.runs {
				t.Errorf("%d runs after importing again, want %d", len(runs), w.runs)
			}
		})
	}
}

// checkRun checks one run; the replica set's name is known from the
// metadata, which describes the last process (a previous process's interim
// chunk comes without it).
func checkRun(t *testing.T, st *store.Store, res Result, w want, last bool) {
	t.Helper()
	ctx := context.Background()
	run, err := st.GetRun(ctx, res.Run)
	if err != nil {
		t.Fatal(err)
	}
	if run.Trigger != Trigger || run.Status != store.StatusOK || !run.StartedAt.Equal(res.First) || !run.EndedAt.Equal(res.Last) {
		t.Errorf("run: trigger %q status %q %s..%s, want import ok %s..%s", run.Trigger, run.Status, run.StartedAt, run.EndedAt, res.First, res.Last)
	}
	if last && w.replSet != "" && run.Params["replSet"] != w.replSet {
		t.Errorf("params %v, want replSet %s", run.Params, w.replSet)
	}
	srv, err := st.Servers(ctx, res.Run)
	if err != nil || len(srv) != 1 || srv[0].Started || srv[0].Version != res.Version || srv[0].PID == 0 {
		t.Errorf("servers %+v (%v), want one not started, version %s, with its pid", srv, err, res.Version)
	}
	steps, err := st.Steps(ctx, res.Run)
	if err != nil || len(steps) != 1 || steps[0].Name != "process" || steps[0].Status != store.StatusOK || steps[0].Labels != nil {
		t.Fatalf("steps %+v (%v), want one ok step process without labels (nothing is known to have changed)", steps, err)
	}
	var prov record.Provenance
	if err := json.Unmarshal(steps[0].Provenance, &prov); err != nil {
		t.Fatal(err)
	}
	if prov.Verdict != record.VerdictUnknown || prov.Reason != ImportedReason || prov.DatasetBytes != nil || prov.ApparentMBps != nil {
		t.Errorf("provenance %+v, want unknown, %q, nothing measured as 0", prov, ImportedReason)
	}
}

// TestImportWindows imports the file whose sampling period goes from 1 s
// to 100 ms to 10 s, with windows given by time and by offset.
func TestImportWindows(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	from := time.Date(2025, 7, 10, 16, 0, 0, 0, time.UTC)
	rep, err := Import(ctx, st, []string{file70}, Options{Name: "prod", Windows: []Window{
		{Name: "early", From: from, To: from.Add(10 * time.Minute)},
		{Name: "offset", Offsets: true, FromOff: time.Hour, ToOff: 2 * time.Hour},
		{Name: "never", From: from.AddDate(1, 0, 0), To: from.AddDate(1, 0, 1)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Samples != 17715 {
		t.Fatalf("runs %+v, want one of 17715 samples", rep.Runs)
	}
	if len(rep.Unmatched) != 1 || rep.Unmatched[0] != "never" {
		t.Errorf("unmatched %v, want [never]", rep.Unmatched)
	}
	res := rep.Runs[0]
	steps, err := st.Steps(ctx, res.Run)
	if err != nil || len(steps) != 3 {
		t.Fatalf("steps %+v (%v), want process, early, offset", steps, err)
	}
	early, off := steps[1], steps[2]
	if early.Name != "early" || early.StartedAt.Before(from) || early.StartedAt.After(from.Add(2*time.Second)) ||
		early.EndedAt.After(from.Add(10*time.Minute)) || early.EndedAt.Before(from.Add(10*time.Minute-2*time.Second)) {
		t.Errorf("early %s..%s, want 16:00..16:10", early.StartedAt.UTC(), early.EndedAt.UTC())
	}
	if got := off.StartedAt.Sub(res.First); off.Name != "offset" || got < time.Hour || got > time.Hour+2*time.Second {
		t.Errorf("offset step starts %s after the first sample, want 1h", got)
	}
	var results struct{ Server record.ServerDeltas }
	if err := json.Unmarshal(early.Results, &results); err != nil {
		t.Fatal(err)
	}
	if results.Server.PagesRead == nil || results.Server.CacheUsedPeak == nil || *results.Server.CacheUsedPeak <= 0 {
		t.Errorf("early's server deltas %+v, want pages read and a cache peak", results.Server)
	}
	samples, err := st.Samples(ctx, res.Run, "server:prod", from, from.Add(10*time.Minute))
	if err != nil || len(samples) < 500 {
		t.Fatalf("%d samples in early (%v)", len(samples), err)
	}
	for i := 1; i < len(samples); i++ {
		if !samples[i].TS.After(samples[i-1].TS) {
			t.Fatalf("sample %d at %s is not after %s", i, samples[i].TS, samples[i-1].TS)
		}
	}
}

func TestNotFTDC(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(p, []byte("these are not metrics, just a text file of some length\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Import(context.Background(), openStore(t), []string{p}, Options{})
	var nf *NotFTDCError
	if !errors.As(err, &nf) || nf.Path != p || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want a NotFTDCError naming %s", err, p)
	}
}

func TestChangedNamesWhatChanged(t *testing.T) {
	meta := &ftdc.Metadata{}
	proc := func(pid int64, version string, s record.Settings) *process {
		return &process{pid: pid, meta: meta, settings: &s, res: &Result{Version: version}}
	}
	a := proc(1, "7.0.12", record.Settings{})
	a.settings.CacheSizeGB, a.settings.SetParameters = 1, map[string]string{"x": "1", "y": "2"}
	b := proc(2, "7.0.12", record.Settings{})
	b.settings.CacheSizeGB, b.settings.EngineConfig, b.settings.SetParameters = 50, "eviction_target=60", map[string]string{"x": "3"}
	if what, did := changed(a, b); !did || what != "cacheSizeGB=50,engineConfig=eviction_target=60,x=3,y unset" {
		t.Errorf("changed = %q, %v", what, did)
	}
	if what, did := changed(a, a); did {
		t.Errorf("a process against itself: changed %q", what)
	}
	c := proc(3, "8.0.1", record.Settings{})
	c.meta = nil
	if what, did := changed(a, c); !did || what != "version=8.0.1" {
		t.Errorf("without metadata: changed = %q, %v; want only the version", what, did)
	}
}

// writeFile writes an FTDC file as mongod 8.0 would: metadata, samples of
// one process, a whole type-2 document and one that changes a parameter
// after tenth sample (written before the chunk that holds the samples
// before it, as mongod does).
func writeFile(t *testing.T, path string, t0 time.Time) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := ftdc.NewWriter(f)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.WriteMetadata(t0, bson.D{
		{Key: "buildInfo", Value: bson.D{{Key: "version", Value: "8.0.4"}, {Key: "gitVersion", Value: "abc"}}},
		{Key: "getCmdLineOpts", Value: bson.D{{Key: "argv", Value: bson.A{"mongod", "--wiredTigerCacheSizeGB", "2"}},
			{Key: "parsed", Value: bson.D{{Key: "storage", Value: bson.D{{Key: "wiredTiger", Value: bson.D{{Key: "engineConfig", Value: bson.D{{Key: "cacheSizeGB", Value: 2.0}}}}}}}}}}},
		{Key: "hostInfo", Value: bson.D{{Key: "system", Value: bson.D{{Key: "numCores", Value: int32(8)}, {Key: "memSizeMB", Value: int64(16384)}}}}},
	}))
	must(w.WriteMetadataDelta(t0, 0, bson.D{{Key: "getParameter", Value: bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}}}}))
	for i := range 20 {
		at := t0.Add(time.Duration(i) * time.Second)
		if i == 10 {
			must(w.WriteMetadataDelta(at, 1, bson.D{{Key: "getParameter", Value: bson.D{{Key: "a", Value: int32(2)}}}}))
		}
		must(w.Add(at, bson.D{{Key: "start", Value: bson.NewDateTimeFromTime(at)},
			{Key: "serverStatus", Value: bson.D{{Key: "start", Value: bson.NewDateTimeFromTime(at)},
				{Key: "host", Value: "db1:27017"}, {Key: "version", Value: "8.0.4"}, {Key: "pid", Value: int64(42)},
				{Key: "uptimeMillis", Value: int64(60000 + i*1000)}, {Key: "localTime", Value: bson.NewDateTimeFromTime(at)},
				{Key: "wiredTiger", Value: bson.D{{Key: "cache", Value: bson.D{
					{Key: "bytes currently in the cache", Value: int64(1000 * (i + 1))},
					{Key: "maximum bytes configured", Value: int64(2 << 30)},
					{Key: "pages read into cache", Value: int64(i * i)}}}}},
				{Key: "end", Value: bson.NewDateTimeFromTime(at)}}},
			{Key: "end", Value: bson.NewDateTimeFromTime(at)}}))
	}
	must(w.Flush())
}

func TestParameterChangeStartsAStep(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	path := filepath.Join(t.TempDir(), "metrics.2025-01-01T00-00-00Z-00000")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	writeFile(t, path, t0)
	rep, err := Import(ctx, st, []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Samples != 20 || rep.Runs[0].Version != "8.0.4" {
		t.Fatalf("runs %+v", rep.Runs)
	}
	run, _ := st.GetRun(ctx, rep.Runs[0].Run)
	if run.Host.Cores != 8 || run.Host.MemoryBytes != 16<<30 {
		t.Errorf("host facts %+v, want 8 cores and 16 GiB from hostInfo", run.Host)
	}
	steps, err := st.Steps(ctx, rep.Runs[0].Run)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps %+v (%v), want two: before and after a=2", steps, err)
	}
	if steps[0].Labels != nil || !steps[0].StartedAt.Equal(t0) || !steps[0].EndedAt.Equal(t0.Add(9*time.Second)) {
		t.Errorf("first step %v %s..%s, want no labels, 0 s..9 s", steps[0].Labels, steps[0].StartedAt.UTC(), steps[0].EndedAt.UTC())
	}
	if steps[1].Labels["changed"] != "a=2" || !steps[1].StartedAt.Equal(t0.Add(10*time.Second)) || !steps[1].EndedAt.Equal(t0.Add(19*time.Second)) {
		t.Errorf("second step %v %s..%s, want changed=a=2, 10 s..19 s", steps[1].Labels, steps[1].StartedAt.UTC(), steps[1].EndedAt.UTC())
	}
	var s0, s1 record.Settings
	if err := json.Unmarshal(steps[0].Settings, &s0); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(steps[1].Settings, &s1); err != nil {
		t.Fatal(err)
	}
	if s0.CacheSizeGB != 2 || s0.Parameters["a"] != "1" || s1.Parameters["a"] != "2" || s1.Parameters["b"] != "x" || s1.CacheMaxBytes != 2<<30 {
		t.Errorf("settings %+v then %+v, want cacheSizeGB 2, a=1 then a=2, b=x", s0, s1)
	}
	var res struct{ Server record.ServerDeltas }
	if err := json.Unmarshal(steps[1].Results, &res); err != nil {
		t.Fatal(err)
	}
	if res.Server.PagesRead == nil || *res.Server.PagesRead != 19*19-10*10 || res.Server.CacheUsedPeak == nil || *res.Server.CacheUsedPeak != 20000 {
		t.Errorf("second step's deltas %+v, want pages read 261 and peak 20000", res.Server)
	}
	if res.Server.AppEvictMicros != nil {
		t.Errorf("application eviction time %v: not in the file, want null", *res.Server.AppEvictMicros)
	}
}

func TestSameFileTwiceInOneImport(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	cp := filepath.Join(t.TempDir(), "copy-of-metrics")
	b, err := os.ReadFile(file406)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Import(ctx, st, []string{file406, cp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Samples != 307 || len(rep.Known) != 1 || rep.Known[0].Path != cp || rep.Known[0].Prev.Path != file406 {
		t.Errorf("runs %+v, known %+v; want one run, the copy known as the first file", rep.Runs, rep.Known)
	}
}

func TestProcessName(t *testing.T) {
	for in, want := range map[string]string{"mongod": "mongod", "mongos": "mongos",
		`C:\Program Files\MongoDB\Server\7.0\bin\mongod.exe`: "mongod", "/usr/bin/mongod": "mongod", "": ""} {
		if got := processName(in); got != want {
			t.Errorf("processName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEmptyFileIsSkipped(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "metrics.interim")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Import(context.Background(), openStore(t), []string{file406, empty}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || len(rep.Runs[0].Skipped) != 0 || len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], empty) {
		t.Errorf("runs %+v, skipped %q; want one run and the empty file said skipped", rep.Runs, rep.Skipped)
	}
}
