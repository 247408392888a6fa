package storage

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestShellString(t *testing.T) {
	oid := bson.ObjectID{0x50, 0x7f, 0x1f, 0x77, 0xbc, 0xf8, 0x6c, 0xd7, 0x99, 0x43, 0x90, 0x11}
	tests := []struct {
		name string
		doc  bson.D
		want string
	}{
		{"int", bson.D{{Key: "_id", Value: int32(1)}}, "{ _id: 1 }"},
		{"negative-int", bson.D{{Key: "_id", Value: int32(-12)}}, "{ _id: -12 }"},
		{"long", bson.D{{Key: "_id", Value: int64(1) << 40}}, "{ _id: 1099511627776 }"},
		{"double", bson.D{{Key: "x", Value: 1.5}}, "{ x: 1.5 }"},
		{"double-integral", bson.D{{Key: "x", Value: 2.0}}, "{ x: 2.0 }"},
		{"double-negative-zero", bson.D{{Key: "x", Value: math.Copysign(0, -1)}}, "{ x: -0.0 }"},
		{"double-16-digits", bson.D{{Key: "x", Value: 0.1 + 0.2}}, "{ x: 0.3 }"},
		{"double-third", bson.D{{Key: "x", Value: 1.0 / 3}}, "{ x: 0.3333333333333333 }"},
		{"double-exponent", bson.D{{Key: "x", Value: 1e20}}, "{ x: 1e+20.0 }"},
		{"double-inf", bson.D{{Key: "x", Value: math.Inf(1)}}, "{ x: inf.0 }"},
		{"string", bson.D{{Key: "s", Value: "abc"}}, `{ s: "abc" }`},
		{"empty-string", bson.D{{Key: "s", Value: ""}}, `{ s: "" }`},
		{"objectid", bson.D{{Key: "_id", Value: oid}}, "{ _id: ObjectId('507f1f77bcf86cd799439011') }"},
		{"null", bson.D{{Key: "email", Value: nil}}, "{ email: null }"},
		{"undefined", bson.D{{Key: "a", Value: bson.Undefined{}}}, "{ a: undefined }"},
		{"bool", bson.D{{Key: "t", Value: true}, {Key: "f", Value: false}}, "{ t: true, f: false }"},
		{"date", bson.D{{Key: "d", Value: bson.DateTime(1700000000000)}}, "{ d: new Date(1700000000000) }"},
		{"nested", bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: bson.D{{Key: "c", Value: "x"}}}}}}, `{ _id: { a: 1, b: { c: "x" } } }`},
		{"array", bson.D{{Key: "a", Value: bson.A{int32(1), "two", bson.D{{Key: "x", Value: 3.5}}, bson.A{}}}}, `{ a: [ 1, "two", { x: 3.5 }, [] ] }`},
		{"empty-array", bson.D{{Key: "a", Value: bson.A{}}}, "{ a: [] }"},
		{"empty-nested-doc", bson.D{{Key: "a", Value: bson.D{}}}, "{ a: {} }"},
		{"empty", bson.D{}, "{}"},
		{"compound", bson.D{{Key: "a", Value: int32(1)}, {Key: "b.c", Value: "x"}}, `{ a: 1, b.c: "x" }`},
		{"index-spec", bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "a", Value: 1.0}}}, {Key: "name", Value: "a_1"}}, `{ v: 2, key: { a: 1.0 }, name: "a_1" }`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShellString(marshal(t, tc.doc)); got != tc.want {
				t.Errorf("ShellString = %q, want %q", got, tc.want)
			}
		})
	}
}
