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

// testCollStats returns count and size from collStats of db.coll.
func testCollStats(t *testing.T, client *mongo.Client, db, coll string) (count, size int64) {
	t.Helper()
	raw, err := client.Database(db).RunCommand(context.Background(), bson.D{{Key: "collStats", Value: coll}}).Raw()
	if err != nil {
		t.Fatalf("collStats %s.%s: %v", db, coll, err)
	}
	return testRawInt(t, raw, "count"), testRawInt(t, raw, "size")
}

// testRawInt returns the integer at path in raw, whatever its BSON number
// type.
func testRawInt(t *testing.T, raw bson.Raw, path ...string) int64 {
	t.Helper()
	v, err := raw.LookupErr(path...)
	if err != nil {
		t.Fatalf("look up %v: %v", path, err)
	}
	n, ok := v.AsInt64OK()
	if !ok {
		t.Fatalf("%v is %v, not a number", path, v.Type)
	}
	return n
}

func TestLoad(t *testing.T) {
	client, _ := startTestServer(t)
	ctx := context.Background()
	var calls int
	var lastDone, lastTotal int64
	spec := LoadSpec{NS: "bench.load", Docs: 5000, DocBytes: 1024, Batch: 700, Threads: 3, StartID: 10}
	res, err := Load(ctx, client, spec, Hooks{Progress: func(done, total int64) { calls, lastDone, lastTotal = calls+1, done, total }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Docs != 5000 || res.Bytes != 5000*1024 || res.Errors != 0 {
		t.Errorf("docs %d, bytes %d, errors %d; want 5000, %d, 0", res.Docs, res.Bytes, res.Errors, 5000*1024)
	}
	if want := int64(8); res.Batch.Count != want || res.Batch.Errors != 0 { // ceil(5000/700)
		t.Errorf("batches %d (errors %d), want %d (0)", res.Batch.Count, res.Batch.Errors, want)
	}
	if res.Batch.P50Micros <= 0 || res.Batch.MaxMicros < res.Batch.P99Micros || res.DocsPerSec <= 0 || res.MBPerSec <= 0 {
		t.Errorf("implausible figures: %+v", res)
	}
	if calls == 0 || lastDone != 5000 || lastTotal != 5000 {
		t.Errorf("progress: %d calls, last (%d, %d); want the last to be (5000, 5000)", calls, lastDone, lastTotal)
	}
	count, size := testCollStats(t, client, "bench", "load")
	if count != 5000 || size != 5000*1024 {
		t.Errorf("collStats count %d size %d, want 5000 and %d", count, size, 5000*1024)
	}
	coll := client.Database("bench").Collection("load")
	for _, id := range []int64{10, 5009} {
		raw, err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Raw()
		if err != nil {
			t.Fatalf("find _id %d: %v", id, err)
		}
		if len(raw) != 1024 {
			t.Errorf("_id %d is %d bytes, want 1024", id, len(raw))
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lte", Value: 5009}}}}); err != nil || n != 5000 {
		t.Errorf("documents with _id in [10, 5009]: %d, %v; want 5000", n, err)
	}
}

func TestLoadDuplicatesFail(t *testing.T) {
	client, _ := startTestServer(t)
	ctx := context.Background()
	spec := LoadSpec{NS: "bench.dup", Docs: 300, DocBytes: 100, Batch: 100}
	if _, err := Load(ctx, client, spec, Hooks{}); err != nil {
		t.Fatal(err)
	}
	spec.StartID, spec.Docs = 250, 100 // 250..299 exist, 300..349 do not
	res, err := Load(ctx, client, spec, Hooks{})
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || !strings.Contains(err.Error(), "100 of 100 documents not inserted") {
		t.Fatalf("err = %v, want a BulkWriteException for all 100 documents", err)
	}
	if res.Docs != 0 || res.Errors != 100 || res.Batch.Errors != 1 {
		t.Errorf("docs %d errors %d failed batches %d, want 0, 100, 1", res.Docs, res.Errors, res.Batch.Errors)
	}
}

func TestLoadPartialBatch(t *testing.T) {
	client, _ := startTestServer(t)
	ctx := context.Background()
	if _, err := Load(ctx, client, LoadSpec{NS: "bench.p", Docs: 10, DocBytes: 64, StartID: 5}, Hooks{}); err != nil {
		t.Fatal(err)
	}
	// _ids 0..19 in one ordered batch: 0..4 go in, 5 fails, 6..19 are not tried.
	res, err := Load(ctx, client, LoadSpec{NS: "bench.p", Docs: 20, DocBytes: 64}, Hooks{})
	if err == nil || res.Docs != 5 || res.Errors != 15 {
		t.Errorf("docs %d errors %d err %v; want 5, 15 and an error", res.Docs, res.Errors, err)
	}
}

// TestLoadCancel: a load cancelled once it has inserted some documents
// stops within seconds with the cancel's cause and reports what was
// acknowledged, no more than the server holds.
func TestLoadCancel(t *testing.T) {
	client, _ := startTestServer(t)
	cause := errors.New("operator pressed ctrl-c")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c := newCancelWhen(cancel, cause, func(done int64) bool { return done > 0 })
	res, err := stopsWithin(t, c, 3*time.Second, func() (LoadResult, error) {
		return Load(ctx, client, LoadSpec{NS: "bench.cancel", Docs: 50_000_000, DocBytes: 1000, Threads: 2}, Hooks{Progress: c.progress})
	})
	if !errors.Is(err, cause) {
		t.Fatalf("err = %v, want the cause %q", err, cause)
	}
	if res.Docs <= 0 || res.Docs >= 50_000_000 || res.Errors != 0 {
		t.Errorf("docs %d errors %d: want some but not all documents and no errors", res.Docs, res.Errors)
	}
	count, _ := testCollStats(t, client, "bench", "cancel")
	if count < res.Docs {
		t.Errorf("server has %d documents, fewer than the %d reported", count, res.Docs)
	}
}

func TestLoadSpecErrors(t *testing.T) {
	good := LoadSpec{NS: "db.c", Docs: 10, DocBytes: 100}
	tests := []struct {
		name string
		edit func(*LoadSpec)
		want string
	}{
		{"no dot", func(s *LoadSpec) { s.NS = "dbc" }, `ns "dbc" is not "db.collection"`},
		{"no collection", func(s *LoadSpec) { s.NS = "db." }, `ns "db." is not`},
		{"no db", func(s *LoadSpec) { s.NS = ".c" }, `ns ".c" is not`},
		{"zero docs", func(s *LoadSpec) { s.Docs = 0 }, "docs 0 out of range [1, 2^63-1]"},
		{"negative docs", func(s *LoadSpec) { s.Docs = -3 }, "docs -3 out of range"},
		{"small docs", func(s *LoadSpec) { s.DocBytes = 31 }, "doc_bytes 31 out of range [32, 16777216]"},
		{"huge docs", func(s *LoadSpec) { s.DocBytes = 16<<20 + 1 }, "doc_bytes 16777217 out of range [32, 16777216]"},
		{"big batch", func(s *LoadSpec) { s.Batch = 100001 }, "batch 100001 out of range [1, 100000]"},
		{"negative batch", func(s *LoadSpec) { s.Batch = -1 }, "batch -1 out of range [1, 100000]"},
		{"many threads", func(s *LoadSpec) { s.Threads = 257 }, "threads 257 out of range [1, 256]"},
		{"negative start", func(s *LoadSpec) { s.StartID = -1 }, "start_id -1 out of range"},
		{"too much memory", func(s *LoadSpec) { s.Docs, s.DocBytes, s.Batch, s.Threads = 1e6, 1<<20, 1000, 2 },
			"threads 2 x batch 1000 x doc_bytes 1048576 = 2000 MB of documents in memory, more than 1024 MB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := good
			tt.edit(&spec)
			_, err := Load(context.Background(), nil, spec, Hooks{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestCheckLoadSpecDefaults(t *testing.T) {
	s, db, coll, err := checkLoadSpec(LoadSpec{NS: "bench.c.d", Docs: 1, DocBytes: 32})
	if err != nil {
		t.Fatal(err)
	}
	if s.Batch != DefaultLoadBatch || s.Threads != 1 || db != "bench" || coll != "c.d" {
		t.Errorf("batch %d threads %d db %q coll %q; want %d, 1, bench, c.d", s.Batch, s.Threads, db, coll, DefaultLoadBatch)
	}
}
