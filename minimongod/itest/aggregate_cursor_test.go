package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// An aggregation whose result needs getMore used to crash the server (its
// cursor has no collection).
func TestAggregateResultAcrossGetMore(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("c")
	docs := make([]any, 250)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 3}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Aggregate(ctx, bson.A{}, options.Aggregate().SetBatchSize(10))
	if err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	if err := cur.All(ctx, &all); err != nil {
		t.Fatalf("aggregate across getMore: %v\n%s", err, s.log.String())
	}
	if len(all) != 250 {
		t.Fatalf("aggregate returned %d documents, want 250", len(all))
	}
	out := runPymongo(t, s, "print(len(list(db.c.aggregate([]))), len(list(db.c.aggregate([{'$match': {'g': 1}}]))))\n")
	if out != "250 83" {
		t.Fatalf("pymongo aggregate = %q, want \"250 83\"", out)
	}
	s.run(t, "admin", bson.D{{Key: "ping", Value: 1}})
}

// A panic while serving one request fails that request with
// InternalError; the server and the connection stay up.
func TestPanicFailsOnlyItsRequest(t *testing.T) {
	t.Parallel()
	s := start(t, "--setParameter", "enableTestCommands=1")
	s.run(t, "test", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}})
	s.run(t, "admin", bson.D{{Key: "configureFailPoint", Value: "minimongodPanicInCommand"}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: bson.D{{Key: "commands", Value: bson.A{"find", "insert"}}}}})
	ce := s.runErr(t, "test", bson.D{{Key: "find", Value: "c"}})
	if ce.Code != 1 || ce.Name != "InternalError" {
		t.Errorf("find with a panic: %v, want InternalError (1)", ce)
	}
	ce = s.runErr(t, "test", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}})
	if ce.Code != 1 {
		t.Errorf("insert with a panic: %v, want InternalError (1)", ce)
	}
	s.run(t, "admin", bson.D{{Key: "configureFailPoint", Value: "minimongodPanicInCommand"}, {Key: "mode", Value: "off"}})
	n, err := s.db("test").Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("after the panics: count = %d, %v; want 1", n, err)
	}
	if !s.waitLog("Uncaught panic while running a command", `"s":"E"`) {
		t.Errorf("no error-level log line with the panic:\n%s", s.log.String())
	}
	// Without enableTestCommands there is no configureFailPoint.
	plain := start(t)
	if ce := plain.runErr(t, "admin", bson.D{{Key: "configureFailPoint", Value: "minimongodPanicInCommand"}, {Key: "mode", Value: "off"}}); ce.Code != 59 {
		t.Errorf("configureFailPoint without test commands: %v, want CommandNotFound", ce)
	}
}
