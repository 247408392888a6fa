package itest

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// No write path may store a document over 16 MiB, and array backfill
// stops at 1,500,000 elements: such a document could never be read again.
func TestDocumentSizeLimitOnEveryWritePath(t *testing.T) {
	t.Parallel()
	s := start(t)
	nineMB := strings.Repeat("x", 9<<20)
	s.run(t, "test", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{
		bson.D{{Key: "_id", Value: 1}, {Key: "arr", Value: bson.A{}}},
		bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: nineMB}},
	}}})
	upd := func(q, u bson.D, upsert bool) bson.D {
		return bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: q}, {Key: "u", Value: u}, {Key: "upsert", Value: upsert}}}}}
	}
	cases := []struct {
		name string
		cmd  bson.D
		want int32
	}{
		{"backfill", upd(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "arr.10000000", Value: 1}}}}, false), 51},
		{"operator", upd(bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: nineMB}}}}, false), 17419},
		{"multi", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 2}}}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: nineMB}}}}}, {Key: "multi", Value: true}}}}}, 17419},
		{"replacement", upd(bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "a", Value: nineMB}, {Key: "b", Value: nineMB}}, false), 17419},
		{"upsert", upd(bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: nineMB}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: nineMB}}}}, true), 17420},
		{"findAndModify", bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 2}}},
			{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: nineMB}}}}}}, 17419},
		{"insert", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: nineMB}, {Key: "b", Value: nineMB}}}}}, 10334},
	}
	for _, tc := range cases {
		if got := writeErrCode(t, s, tc.cmd); got != tc.want {
			t.Errorf("%s: code %d, want %d", tc.name, got, tc.want)
		}
	}
	// Every stored document can still be read, and none grew.
	cur, err := s.db("test").Collection("c").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	if err := cur.All(ctx, &docs); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if len(docs) != 2 || len(docs[0]) > 64 || len(docs[1]) > 10<<20 {
		t.Errorf("after refused writes: %d documents (sizes %d, %d)", len(docs), len(docs[0]), len(docs[len(docs)-1]))
	}
	// Padding within the limit still works.
	if got := writeErrCode(t, s, upd(bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "arr.1000", Value: 1}}}}, false)); got != 0 {
		t.Errorf("padding to 1000: code %d", got)
	}
}
