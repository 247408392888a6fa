package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// A delete statement whose limit is not 0 or 1 is refused and deletes
// nothing (it used to delete every match).
func TestDeleteWithBadLimitDeletesNothing(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		stmt bson.D
		code int32
	}{
		{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: "x"}}, 14},
		{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: true}}, 14},
		{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 2}}, 9},
		{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0.5}}, 9},
		{bson.D{{Key: "q", Value: bson.D{}}}, 40414},
	}
	for _, tc := range cases {
		if code := writeErrCode(t, s, bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{tc.stmt}}}); code != tc.code {
			t.Errorf("delete %v: code %d, want %d", tc.stmt, code, tc.code)
		}
	}
	if n := must(c.CountDocuments(ctx, bson.D{}))(t); n != 3 {
		t.Fatalf("%d documents left after refused deletes, want 3", n)
	}
	res := s.run(t, "test", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1.0}}}}})
	if res["n"] != int32(1) {
		t.Errorf("delete with limit 1.0: %v", res)
	}
}
