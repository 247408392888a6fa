package itest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/minimongod/wire"
)

// Checks mongod 4.4 makes, with its codes and messages.
func TestMongodChecks(t *testing.T) {
	t.Parallel()
	s := start(t)
	insert := func(coll string, doc bson.D) bson.D {
		return bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: bson.A{doc}}}
	}
	wantErr := func(what string, cmd bson.D, code int32, msg string) {
		t.Helper()
		raw, err := s.db("test").RunCommand(ctx, cmd).Raw()
		var got int32
		var text string
		var we mongo.WriteException
		var ce mongo.CommandError
		switch {
		case errorsAs(err, &we) && len(we.WriteErrors) > 0:
			got, text = int32(we.WriteErrors[0].Code), we.WriteErrors[0].Message
		case errorsAs(err, &ce):
			got, text = ce.Code, ce.Message
		default:
			t.Errorf("%s: %v %v, want code %d", what, raw, err, code)
			return
		}
		if got != code || !strings.Contains(text, msg) {
			t.Errorf("%s: %d %q, want %d %q", what, got, text, code, msg)
		}
	}
	wantErr("$-prefixed field", insert("c", bson.D{{Key: "$x", Value: 1}}), 2, "Document can't have $ prefixed field names: $x")
	wantErr("create system.*", bson.D{{Key: "create", Value: "system.foo"}}, 73, "Invalid system namespace: test.system.foo")
	wantErr("insert system.*", insert("system.foo", bson.D{{Key: "a", Value: 1}}), 73, "cannot write to 'test.system.foo'")
	long := strings.Repeat("n", 260)
	wantErr("long namespace", insert(long, bson.D{{Key: "a", Value: 1}}), 73, "Fully qualified namespace is too long. Namespace: test."+long+" Max: 255")
	s.run(t, "test", insert("c", bson.D{{Key: "_id", Value: 1}}))
	wantErr("negative limit", bson.D{{Key: "find", Value: "c"}, {Key: "limit", Value: -1}}, 2, "Limit value must be non-negative, but received: -1")
	wantErr("NaN limit", bson.D{{Key: "find", Value: "c"}, {Key: "limit", Value: math.NaN()}}, 2, "Limit value must be non-negative")
	wantErr("hint to a missing index", bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: "nope_1"}}, 2, "hint provided does not correspond to an existing index")
	wantErr("hint pattern", bson.D{{Key: "count", Value: "c"}, {Key: "hint", Value: bson.D{{Key: "nope", Value: 1}}}}, 2, "hint provided does not correspond to an existing index")
	// 64 indexes at most, _id included.
	var specs bson.A
	for i := 0; i < 63; i++ {
		specs = append(specs, bson.D{{Key: "key", Value: bson.D{{Key: fmt.Sprintf("f%d", i), Value: 1}}}, {Key: "name", Value: fmt.Sprintf("f%d_1", i)}})
	}
	s.run(t, "test", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: specs}})
	wantErr("65th index", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
		bson.D{{Key: "key", Value: bson.D{{Key: "f63", Value: 1}}}, {Key: "name", Value: "f63_1"}}}}}, 67, "add index fails, too many indexes for test.c key:")
	// OP_MSG without $db.
	c := rawConn(t, s)
	body := must(bson.Marshal(bson.D{{Key: "ping", Value: 1}}))(t)
	if _, err := c.Write(wire.AppendMsg(nil, 1, 0, 0, body)); err != nil {
		t.Fatal(err)
	}
	_, reply, err := readReply(t, c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wire.Decode(reply)
	if err != nil {
		t.Fatalf("decode reply: %v", err)
	}
	doc := toM(t, m.Body)
	if doc["code"] != int32(40571) || doc["errmsg"] != "OP_MSG requests require a $db argument" {
		t.Errorf("OP_MSG without $db: %v", doc)
	}
	n := must(s.db("test").Collection("c").CountDocuments(ctx, bson.D{}))(t)
	if n != 1 {
		t.Errorf("%d documents, want 1: a refused write wrote", n)
	}
}
