package itest

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// waitCount waits up to 10 s until coll holds want documents.
func waitCount(t *testing.T, s *server, coll string, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var n int64
	for time.Now().Before(deadline) {
		var err error
		if n, err = s.db("t").Collection(coll).CountDocuments(ctx, bson.D{}); err != nil {
			t.Fatal(err)
		}
		if n == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s holds %d documents after 10s, want %d", coll, n, want)
}

func TestTTLMonitorDeletesExpiredDocuments(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "ttlMonitorSleepSecs=1")
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	events := s.db("t").Collection("events")
	docs := []any{}
	for i := 0; i < 20; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "createdAt", Value: past}})
	}
	docs = append(docs,
		bson.D{{Key: "_id", Value: "fresh"}, {Key: "createdAt", Value: now}},
		bson.D{{Key: "_id", Value: "earliestExpired"}, {Key: "createdAt", Value: bson.A{future, past}}},
		bson.D{{Key: "_id", Value: "allFuture"}, {Key: "createdAt", Value: bson.A{future, future.Add(time.Hour)}}},
		bson.D{{Key: "_id", Value: "notADate"}, {Key: "createdAt", Value: "yesterday"}},
		bson.D{{Key: "_id", Value: "halfHourOld"}, {Key: "createdAt", Value: now.Add(-30 * time.Minute)}},
	)
	if _, err := events.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// Off-peak scheduling: expireAfterSeconds 0 and a chosen expireAt.
	sched := s.db("t").Collection("scheduled")
	if _, err := sched.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "expireAt", Value: now.Add(-time.Second)}},
		bson.D{{Key: "_id", Value: 2}, {Key: "expireAt", Value: now.Add(2 * time.Second)}},
		bson.D{{Key: "_id", Value: 3}, {Key: "expireAt", Value: future}},
	}); err != nil {
		t.Fatal(err)
	}
	before := must(status(s))(t)
	if _, err := events.Indexes().CreateOne(ctx, mongoIndexModel{Keys: bson.D{{Key: "createdAt", Value: 1}},
		Options: options.Index().SetExpireAfterSeconds(3600 - 60)}); err != nil {
		t.Fatal(err)
	}
	if _, err := sched.Indexes().CreateOne(ctx, mongoIndexModel{Keys: bson.D{{Key: "expireAt", Value: 1}},
		Options: options.Index().SetExpireAfterSeconds(0)}); err != nil {
		t.Fatal(err)
	}
	waitCount(t, s, "events", 4) // fresh, allFuture, notADate, halfHourOld
	waitCount(t, s, "scheduled", 1)
	after := must(status(s))(t)
	deleted := num(after, "metrics.ttl.deletedDocuments") - num(before, "metrics.ttl.deletedDocuments")
	if deleted != 23 || num(after, "metrics.ttl.passes") < 2 {
		t.Errorf("metrics.ttl = %v, want 23 deleted and passes", field(after, "metrics.ttl"))
	}
	if d := num(after, "metrics.document.deleted") - num(before, "metrics.document.deleted"); d != 23 {
		t.Errorf("metrics.document.deleted +%d, want 23", d)
	}
	if d := num(after, "opcounters.delete") - num(before, "opcounters.delete"); d != 23 {
		t.Errorf("opcounters.delete +%d, want 23", d)
	}

	// collMod shortens the expiry: the half-hour-old document goes too.
	res := s.run(t, "t", bson.D{{Key: "collMod", Value: "events"}, {Key: "index", Value: bson.D{
		{Key: "keyPattern", Value: bson.D{{Key: "createdAt", Value: 1}}}, {Key: "expireAfterSeconds", Value: 600}}}})
	if num(res, "expireAfterSeconds_old") != 3540 || num(res, "expireAfterSeconds_new") != 600 {
		t.Errorf("collMod = %v", res)
	}
	waitCount(t, s, "events", 3)

	// Disabled, the monitor makes no passes.
	setParam(t, s, "ttlMonitorEnabled", false)
	time.Sleep(1200 * time.Millisecond)
	p1 := must(status(s))(t)
	time.Sleep(2200 * time.Millisecond)
	p2 := must(status(s))(t)
	if num(p2, "metrics.ttl.passes") != num(p1, "metrics.ttl.passes") {
		t.Errorf("passes went from %d to %d with ttlMonitorEnabled false", num(p1, "metrics.ttl.passes"), num(p2, "metrics.ttl.passes"))
	}
	s.stop()
	log := s.log.String()
	if !strings.Contains(log, `"id":5479200`) || !strings.Contains(log, `"msg":"Deleted expired documents using index"`) ||
		!strings.Contains(log, `"numDeleted":`) || !strings.Contains(log, `"namespace":"t.events"`) {
		t.Errorf("no TTL deletion log line in:\n%s", log)
	}
}

func TestCollModErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	must(s.db("t").Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}))(t)
	must(s.db("t").Collection("c").Indexes().CreateOne(ctx, mongoIndexModel{Keys: bson.D{{Key: "a", Value: 1}}}))(t)
	for _, tc := range []struct {
		cmd  bson.D
		code int32
	}{
		{bson.D{{Key: "collMod", Value: "missing"}}, 26},
		{bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "nope"}, {Key: "expireAfterSeconds", Value: 5}}}}, 27},
		{bson.D{{Key: "collMod", Value: "c"}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "expireAfterSeconds", Value: 5}}}}, 72},
	} {
		if ce := s.runErr(t, "t", tc.cmd); ce.Code != tc.code {
			t.Errorf("%v: code %d (%s), want %d", tc.cmd, ce.Code, ce.Message, tc.code)
		}
	}
}
