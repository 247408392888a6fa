package query

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// mj parses relaxed extended JSON into a BSON document ({} for "").
func mj(t testing.TB, s string) bson.Raw {
	t.Helper()
	if s == "" {
		s = "{}"
	}
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		t.Fatalf("bad test json %s: %v", s, err)
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mv parses a single relaxed extended JSON value.
func mv(t testing.TB, s string) bsoncore.Value {
	t.Helper()
	d := mj(t, `{"v": `+s+`}`)
	return bsoncore.Document(d).Lookup("v")
}

// js renders a document as relaxed extended JSON for comparisons.
func js(t testing.TB, b []byte) string {
	t.Helper()
	if err := bsoncore.Document(b).Validate(); err != nil {
		t.Fatalf("invalid output bson: %v", err)
	}
	return bson.Raw(b).String()
}

// errInfo returns the mongoerr code and message of err (0, "" for nil).
func errInfo(err error) (int32, string) {
	if err == nil {
		return 0, ""
	}
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me.Code, me.Msg
	}
	return -1, err.Error()
}
