package itest

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// writeErr runs a write command on database test and returns its first
// write error or command error; ok is false when the command succeeded.
func writeErr(t *testing.T, s *server, cmd bson.D) (code int32, msg string, ok bool) {
	t.Helper()
	err := s.db("test").RunCommand(ctx, cmd).Err()
	var we mongo.WriteException
	var ce mongo.CommandError
	switch {
	case err == nil:
		return 0, "", false
	case errorsAs(err, &we) && len(we.WriteErrors) > 0:
		return int32(we.WriteErrors[0].Code), we.WriteErrors[0].Message, true
	case errorsAs(err, &ce):
		return ce.Code, ce.Message, true
	}
	t.Fatalf("%v: %v", cmd[0], err)
	return 0, "", false
}

// TestDuplicateIDRefused checks that a document with two _id fields is
// refused as mongod 4.4 refuses it, in its place in the batch, and that
// other repeated field names are stored as they come, as mongod stores them.
func TestDuplicateIDRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("dup")
	twoIDs := bson.D{{Key: "_id", Value: 3}, {Key: "_id", Value: 4}}
	for _, tc := range []struct {
		name string
		doc  bson.D
	}{
		{"_id first", twoIDs},
		{"_id later", bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 3}, {Key: "b", Value: 2}, {Key: "_id", Value: 4}}},
		{"second _id of another type", bson.D{{Key: "_id", Value: 3}, {Key: "_id", Value: "x"}}},
	} {
		code, msg, failed := writeErr(t, s, bson.D{{Key: "insert", Value: "dup"}, {Key: "documents", Value: bson.A{tc.doc}}})
		if !failed || code != 2 || msg != "can't have multiple _id fields in one document" {
			t.Errorf("%s: code %d %q (failed %v), want 2 \"can't have multiple _id fields in one document\"", tc.name, code, msg, failed)
		}
	}
	if n := must(c.CountDocuments(ctx, bson.D{}))(t); n != 0 {
		t.Fatalf("%d documents stored, want none", n)
	}
	// Other repeated names are kept, both of them, in their order.
	s.run(t, "test", bson.D{{Key: "insert", Value: "dup"}, {Key: "documents", Value: bson.A{
		bson.D{{Key: "_id", Value: 10}, {Key: "a", Value: 1}, {Key: "a", Value: 2}}}}})
	raw := must(c.FindOne(ctx, bson.D{{Key: "_id", Value: 10}}).Raw())(t)
	elems := must(raw.Elements())(t)
	if len(elems) != 3 || elems[1].Key() != "a" || elems[1].Value().Int32() != 1 || elems[2].Key() != "a" || elems[2].Value().Int32() != 2 {
		t.Errorf("stored %v, want {_id: 10, a: 1, a: 2}", raw)
	}
}

// TestInsertErrorsInTheirPlace checks that the write errors of an insert
// name the documents they are about when some documents are refused before
// any is inserted and a later one then fails to insert.
func TestInsertErrorsInTheirPlace(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, refused := range []bson.D{
		{{Key: "$x", Value: 1}},
		{{Key: "_id", Value: 3}, {Key: "_id", Value: 4}},
	} {
		c := s.db("test").Collection("place")
		noErr(t, c.Drop(ctx))
		// Unordered: the refusal and the later duplicate key each at its
		// index, and the good documents stored.
		docs := []any{bson.D{{Key: "_id", Value: 1}}, refused, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}
		_, err := c.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
		var bwe mongo.BulkWriteException
		if !errorsAs(err, &bwe) || len(bwe.WriteErrors) != 2 ||
			bwe.WriteErrors[0].Index != 1 || bwe.WriteErrors[0].Code != 2 ||
			bwe.WriteErrors[1].Index != 2 || bwe.WriteErrors[1].Code != 11000 {
			t.Errorf("unordered, refusing %v: %v, want index 1 code 2 and index 2 code 11000", refused, err)
		}
		if n := must(c.CountDocuments(ctx, bson.D{}))(t); n != 2 {
			t.Errorf("unordered, refusing %v: %d documents stored, want 2 (_id 1 and 2)", refused, n)
		}
		// Ordered: a duplicate key before the refused document stops the
		// insert there, and it alone is reported.
		_, err = c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "_id", Value: 1}}, refused})
		if !errorsAs(err, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 || bwe.WriteErrors[0].Code != 11000 {
			t.Errorf("ordered, refusing %v: %v, want index 1 code 11000 only", refused, err)
		}
		if n := must(c.CountDocuments(ctx, bson.D{}))(t); n != 3 {
			t.Errorf("ordered, refusing %v: %d documents stored, want 3 (_id 1, 2 and 5)", refused, n)
		}
	}
}

// nestedDoc is a document levels deep: {a: {a: ... {a: 1}}}.
func nestedDoc(levels int) bson.D {
	d := bson.D{{Key: "a", Value: 1}}
	for i := 1; i < levels; i++ {
		d = bson.D{{Key: "a", Value: d}}
	}
	return d
}

// dottedPath is a path of n parts named field: f.f.f...
func dottedPath(field string, n int) string {
	return strings.TrimSuffix(strings.Repeat(field+".", n), ".")
}

const overflowUpdate = "Document exceeds maximum nesting depth of 180"

// TestNestingDepthRefused checks mongod 4.4's limit of 180 levels for
// stored documents on insert, update and upsert, and that an update path of
// 500,000 parts is refused without building its document.
func TestNestingDepthRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	insert := func(doc bson.D) bson.D {
		return bson.D{{Key: "insert", Value: "deep"}, {Key: "documents", Value: bson.A{doc}}}
	}
	update := func(q, u bson.D, upsert bool) bson.D {
		return bson.D{{Key: "update", Value: "deep"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: q}, {Key: "u", Value: u}, {Key: "upsert", Value: upsert}}}}}
	}
	set := func(path string, v any) bson.D { return bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: v}}}} }
	id := func(n int) bson.D { return bson.D{{Key: "_id", Value: n}} }
	s.run(t, "test", insert(id(1)))
	for _, tc := range []struct {
		name    string
		cmd     bson.D
		code    int32
		message string
	}{
		{"insert 180 levels", insert(append(id(2), nestedDoc(180)...)), 0, ""},
		{"insert 181 levels", insert(append(id(3), nestedDoc(181)...)), 15, "cannot insert document because it exceeds 180 levels of nesting"},
		{"$set a path of 180 parts", update(id(1), set(dottedPath("p", 180), 1), false), 0, ""},
		{"$set a path of 181 parts", update(id(1), set(dottedPath("q", 181), 1), false), 15, overflowUpdate},
		{"$set a document too deep", update(id(1), set("b", nestedDoc(180)), false), 15, overflowUpdate},
		{"$set 500,000 parts", update(id(1), set(dottedPath("r", 500000), 1), false), 15, overflowUpdate},
		{"$set 500,000 parts, no match", update(id(99), set(dottedPath("r", 500000), 1), false), 0, ""},
		{"$unset 500,000 parts", update(id(1), bson.D{{Key: "$unset", Value: bson.D{{Key: dottedPath("r", 500000), Value: 1}}}}, false), 0, ""},
		{"upsert 500,000 parts", update(id(98), set(dottedPath("r", 500000), 1), true), 15, overflowUpdate},
		{"replacement too deep", update(id(1), append(bson.D{{Key: "x", Value: 1}}, nestedDoc(181)...), false), 15, overflowUpdate},
		{"500,000 parts conflicting with its prefix", update(id(1), bson.D{{Key: "$set", Value: bson.D{
			{Key: dottedPath("s", 500000), Value: 1}, {Key: dottedPath("s", 250000), Value: 1}}}}, false), 40, "would create a conflict at"},
	} {
		code, msg, failed := writeErr(t, s, tc.cmd)
		switch {
		case tc.code == 0 && failed:
			t.Errorf("%s: refused with %d %q, want it done", tc.name, code, msg)
		case tc.code != 0 && (code != tc.code || !strings.Contains(msg, tc.message)):
			t.Errorf("%s: code %d %q, want %d %q", tc.name, code, msg, tc.code, tc.message)
		}
	}
	c := s.db("test").Collection("deep")
	if n := must(c.CountDocuments(ctx, bson.D{}))(t); n != 2 {
		t.Errorf("%d documents, want 2 (_id 1 and 2): a refused write wrote", n)
	}
	// The 500,000-part paths were refused without building anything near
	// their size: the server never held more than a few hundred megabytes.
	peak := peakRSSBytes(t, s.cmd.Process.Pid)
	t.Logf("minimongod's peak RSS: %d MB", peak>>20)
	if peak > 400<<20 {
		t.Errorf("minimongod's peak RSS is %d MB, want under 400 MB", peak>>20)
	}
}

// TestLongDatabaseNameRefused checks mongod's limit of 63 bytes for a
// database name, on every command.
func TestLongDatabaseNameRefused(t *testing.T) {
	t.Parallel()
	s := start(t)
	ok63 := strings.Repeat("d", 63)
	if _, err := s.db(ok63).Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatalf("insert into a 63-byte database name: %v", err)
	}
	long := strings.Repeat("d", 64)
	for _, cmd := range []bson.D{
		{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}},
		{{Key: "create", Value: "c"}},
		{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}},
		{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "upsert", Value: true}}}}},
		{{Key: "find", Value: "c"}},
		{{Key: "ping", Value: 1}},
	} {
		ce := s.runErr(t, long, cmd)
		if want := "Invalid database name: '" + long + "'"; ce.Code != 73 || ce.Message != want {
			t.Errorf("%s on a 64-byte database name: %d %q, want 73 %q", cmd[0].Key, ce.Code, ce.Message, want)
		}
	}
	ld := s.run(t, "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "nameOnly", Value: true}})
	for _, d := range ld["databases"].(bson.A) {
		if name := d.(bson.M)["name"]; name == long {
			t.Errorf("listDatabases lists %s", long)
		}
	}
}
