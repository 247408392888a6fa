package wire

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestValidateDocAllTypes(t *testing.T) {
	dec, err := bson.ParseDecimal128("1.5")
	if err != nil {
		t.Fatal(err)
	}
	all := doc(t, bson.D{
		{Key: "double", Value: 1.5},
		{Key: "string", Value: "s"},
		{Key: "doc", Value: bson.D{{Key: "x", Value: 1}}},
		{Key: "array", Value: bson.A{1, "two"}},
		{Key: "binary", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}},
		{Key: "undefined", Value: bson.Undefined{}},
		{Key: "oid", Value: bson.NewObjectID()},
		{Key: "bool", Value: true},
		{Key: "date", Value: bson.DateTime(1)},
		{Key: "null", Value: nil},
		{Key: "regex", Value: bson.Regex{Pattern: "^a", Options: "i"}},
		{Key: "dbpointer", Value: bson.DBPointer{DB: "db.c", Pointer: bson.NewObjectID()}},
		{Key: "js", Value: bson.JavaScript("f()")},
		{Key: "symbol", Value: bson.Symbol("sym")},
		{Key: "scope", Value: bson.CodeWithScope{Code: "g()", Scope: bson.D{{Key: "y", Value: 2}}}},
		{Key: "int32", Value: int32(3)},
		{Key: "ts", Value: bson.Timestamp{T: 1, I: 2}},
		{Key: "int64", Value: int64(4)},
		{Key: "decimal", Value: dec},
		{Key: "min", Value: bson.MinKey{}},
		{Key: "max", Value: bson.MaxKey{}},
	})
	if err := validateDoc(all, 1); err != nil {
		t.Fatalf("validateDoc(all types) = %v", err)
	}
}

func TestValidateDocErrors(t *testing.T) {
	// elem wraps one element (type, key "k", value) in a document.
	elem := func(typ byte, value ...[]byte) []byte {
		inner := cat(append([][]byte{{typ, 'k', 0}}, value...)...)
		return cat(i32(int32(len(inner)+5)), inner, []byte{0})
	}
	str := func(s string) []byte { return cat(i32(int32(len(s)+1)), []byte(s), []byte{0}) }
	empty := cat(i32(5), []byte{0})
	tests := []struct {
		name string
		d    []byte
	}{
		{"short", []byte{5, 0, 0}},
		{"length mismatch", cat(i32(6), []byte{0})},
		{"missing terminator", cat(i32(5), []byte{1})},
		{"key not terminated", cat(i32(8), []byte{0x10, 'k', 'e'}, []byte{0})},
		{"unknown type", elem(0x20)},
		{"type zero inside", elem(0x00)},
		{"double truncated", elem(0x01, []byte{1, 2, 3})},
		{"bad bool", elem(0x08, []byte{2})},
		{"string zero length", elem(0x02, i32(0))},
		{"string overruns", elem(0x02, i32(50), []byte("ab\x00"))},
		{"string no NUL", elem(0x02, i32(3), []byte("abc"))},
		{"string length truncated", elem(0x02, []byte{1})},
		{"embedded overruns", elem(0x03, i32(40), []byte{0})},
		{"embedded bad inner", elem(0x03, elem(0x20))},
		{"array bad inner", elem(0x04, cat(i32(5), []byte{7}))},
		{"binary negative", elem(0x05, i32(-1), []byte{0})},
		{"binary overruns", elem(0x05, i32(9), []byte{0, 1})},
		{"binary header truncated", elem(0x05, []byte{0, 0})},
		{"regex pattern open", elem(0x0b, []byte("abc"))},
		{"regex options open", elem(0x0b, []byte("abc\x00i"))},
		{"dbpointer id short", elem(0x0c, str("db.c"), make([]byte, 11))},
		{"dbpointer bad string", elem(0x0c, i32(-3), make([]byte, 12))},
		{"scope length short", elem(0x0f, i32(13), str("f"), empty)},
		{"scope length overruns", elem(0x0f, i32(100), str("f"), empty)},
		{"scope parts overfill", elem(0x0f, i32(4+6+5+1), str("f"), empty, []byte{0})},
		{"scope bad string", elem(0x0f, i32(4+6+5), i32(9), []byte("f\x00"), empty)},
		{"scope truncated", elem(0x0f, []byte{1, 2})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := validateDoc(tt.d, 1); !errors.Is(err, ErrMalformed) {
				t.Errorf("validateDoc(%x) = %v, want ErrMalformed", tt.d, err)
			}
		})
	}
}
