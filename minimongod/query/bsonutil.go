package query

import (
	"strconv"
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// lookupField returns the value of the top-level field name in doc.
func lookupField(doc []byte, name string) (bsoncore.Value, bool) {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return bsoncore.Value{}, false
		}
		if string(k) == name {
			return v, true
		}
	}
}

// arrayIndex returns the i-th element of the BSON array arr.
func arrayIndex(arr []byte, i int) (bsoncore.Value, bool) {
	it := rawbson.NewIter(arr)
	for n := 0; ; n++ {
		_, v, ok := it.Next()
		if !ok {
			return bsoncore.Value{}, false
		}
		if n == i {
			return v, true
		}
	}
}

// Lookup returns the value at the dotted path in doc. Numeric components
// index arrays; no array expansion is performed.
func Lookup(doc bson.Raw, path string) (bsoncore.Value, bool) {
	v := bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}
	for {
		comp, rest, more := strings.Cut(path, ".")
		var ok bool
		if v, ok = child(v, comp); !ok {
			return bsoncore.Value{}, false
		}
		if !more {
			return v, true
		}
		path = rest
	}
}

// child returns the field comp of a document, or element comp of an array.
func child(v bsoncore.Value, comp string) (bsoncore.Value, bool) {
	switch v.Type {
	case bsoncore.TypeEmbeddedDocument:
		return lookupField(v.Data, comp)
	case bsoncore.TypeArray:
		i, ok := arrayIdx(comp)
		if !ok {
			return bsoncore.Value{}, false
		}
		return arrayIndex(v.Data, i)
	}
	return bsoncore.Value{}, false
}

// arrayIdx parses a path component as an array index (digits only).
func arrayIdx(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// isNumber reports whether t is a numeric BSON type.
func isNumber(t bsoncore.Type) bool {
	switch t {
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return true
	}
	return false
}

// isOperatorDoc reports whether v is a document whose first key starts with $.
func isOperatorDoc(v bsoncore.Value) bool {
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return false
	}
	it := rawbson.NewIter(v.Data)
	k, _, ok := it.Next()
	return ok && len(k) > 0 && k[0] == '$'
}

// truthy is mongod's BSONElement::trueValue.
func truthy(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeBoolean:
		return len(v.Data) > 0 && v.Data[0] != 0
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return !isZeroNumber(v)
	case bsoncore.TypeNull, bsoncore.TypeUndefined, 0:
		return false
	}
	return true
}

// isZeroNumber reports whether a numeric value equals zero.
func isZeroNumber(v bsoncore.Value) bool {
	return Compare(v, bsoncore.Value{Type: bsoncore.TypeInt32, Data: []byte{0, 0, 0, 0}}) == 0
}

// int32Val, int64Val, doubleVal and nullVal build scalar values.
func int32Val(i int32) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, i)}
}

func int64Val(i int64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, i)}
}

func doubleVal(f float64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, f)}
}

var nullVal = bsoncore.Value{Type: bsoncore.TypeNull}
