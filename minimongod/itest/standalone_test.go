package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Transactions and replica set commands are refused as a standalone
// mongod refuses them, and a refused transaction statement writes nothing.
func TestTransactionsAndReplSetRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	stmt := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}},
		{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}}
	if ce := s.runErr(t, "test", stmt); ce.Code != 20 || ce.Message != "Transaction numbers are only allowed on a replica set member or mongos" {
		t.Errorf("startTransaction: %v", ce)
	}
	retryable := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}, {Key: "txnNumber", Value: int64(2)}}
	if ce := s.runErr(t, "test", retryable); ce.Code != 20 {
		t.Errorf("txnNumber: %v", ce)
	}
	if ce := s.runErr(t, "admin", bson.D{{Key: "commitTransaction", Value: 1}}); ce.Code != 20 {
		t.Errorf("commitTransaction: %v", ce)
	}
	if n := must(s.db("test").Collection("c").CountDocuments(ctx, bson.D{}))(t); n != 0 {
		t.Errorf("%d documents written by refused transaction statements", n)
	}
	if ce := s.runErr(t, "admin", bson.D{{Key: "replSetGetStatus", Value: 1}}); ce.Code != 76 || ce.Name != "NoReplicationEnabled" {
		t.Errorf("replSetGetStatus: %v", ce)
	}
}

// distinct returns each value once, array elements one by one.
func TestDistinct(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("c")
	must(c.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}, {Key: "g", Value: "x"}}, bson.D{{Key: "a", Value: bson.A{2, 3}}, {Key: "g", Value: "x"}},
		bson.D{{Key: "a", Value: 1}, {Key: "g", Value: "y"}}, bson.D{{Key: "g", Value: "x"}}}))(t)
	res := s.run(t, "test", bson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}, {Key: "query", Value: bson.D{{Key: "g", Value: "x"}}}})
	vals := res["values"].(bson.A)
	if len(vals) != 3 || vals[0] != int32(1) || vals[1] != int32(2) || vals[2] != int32(3) {
		t.Errorf("distinct = %v", vals)
	}
	out := runPymongo(t, s, "print(sorted(db.c.distinct('g')))\n")
	if out != "['x', 'y']" {
		t.Errorf("pymongo distinct: %q", out)
	}
}
