package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The profiler records operations in system.profile with what the
// executor examined, and slow operations are logged as mongod's
// "Slow query" line.
func TestProfilerAndSlowQueryLog(t *testing.T) {
	s := start(t)
	c := s.db("test").Collection("c")
	docs := make([]any, 1000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongoIndex("a")); err != nil {
		t.Fatal(err)
	}
	res := s.run(t, "test", bson.D{{Key: "profile", Value: 2}})
	if res["was"] != int32(0) || res["slowms"] != int32(100) || res["sampleRate"] != 1.0 {
		t.Errorf("profile 2 = %v", res)
	}
	var got []bson.M
	cur, err := c.Find(ctx, bson.D{{Key: "a", Value: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &got); err != nil || len(got) != 100 {
		t.Fatalf("find: %d, %v", len(got), err)
	}
	if res := s.run(t, "test", bson.D{{Key: "profile", Value: -1}}); res["was"] != int32(2) {
		t.Errorf("profile -1 = %v", res)
	}
	var entries []bson.M
	pc, err := s.db("test").Collection("system.profile").Find(ctx, bson.D{{Key: "op", Value: "query"}, {Key: "ns", Value: "test.c"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.All(ctx, &entries); err != nil || len(entries) != 1 {
		t.Fatalf("system.profile query entries: %v, %v", entries, err)
	}
	e := entries[0]
	if e["keysExamined"] != int64(100) || e["docsExamined"] != int64(100) || e["nreturned"] != int64(100) ||
		e["planSummary"] != "IXSCAN { a: 1 }" || e["client"] != "127.0.0.1" {
		t.Errorf("profile entry = %v", e)
	}
	for _, k := range []string{"command", "millis", "ts", "responseLength"} {
		if _, ok := e[k]; !ok {
			t.Errorf("profile entry has no %s: %v", k, e)
		}
	}
	if n := must(s.db("test").Collection("system.profile").CountDocuments(ctx, bson.D{{Key: "op", Value: "insert"}}))(t); n != 0 {
		t.Errorf("%d inserts profiled before profiling was on", n)
	}
	if ce := s.runErr(t, "test", bson.D{{Key: "profile", Value: 5}}); ce.Code != 2 {
		t.Errorf("profile 5: %v", ce)
	}

	// --profile 1 --slowms 0: every operation is slow, so profiled and logged.
	s2 := start(t, "--profile", "1", "--slowms", "0")
	must(s2.db("p").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}))(t)
	s2.db("p").Collection("c").FindOne(ctx, bson.D{{Key: "x", Value: 1}})
	if n, err := s2.db("p").Collection("system.profile").CountDocuments(ctx, bson.D{{Key: "op", Value: "query"}}); err != nil || n != 1 {
		t.Errorf("level 1 with slowms 0: %d query entries (%v)", n, err)
	}
	if !s2.waitLog(`"msg":"Slow query"`, `"durationMillis":`, `"planSummary":"COLLSCAN"`, `"ns":"p.c"`) {
		t.Errorf("no Slow query log line for the find")
	}
	if containsLine(s.log.String(), `"msg":"Slow query"`, `"ns":"test.c"`, `"find"`) {
		t.Errorf("a fast find was logged as slow with slowms 100")
	}
}
