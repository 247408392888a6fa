package storage

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
)

// DuplicateKeyError is E11000 with the index and key, as mongod reports it
// in writeErrors (keyPattern, keyValue).
type DuplicateKeyError struct {
	Err        *mongoerr.Error
	KeyPattern bson.Raw
	KeyValue   bson.Raw
}

func (e *DuplicateKeyError) Error() string { return e.Err.Error() }

// Unwrap returns the E11000 server error.
func (e *DuplicateKeyError) Unwrap() error { return e.Err }

func duplicateID(c *Collection, id bsoncore.Value) error {
	pattern := bsoncore.NewDocumentBuilder().AppendInt32("_id", 1).Build()
	value := bsoncore.NewDocumentBuilder().AppendValue("_id", id).Build()
	return newDup(c, "_id_", bson.Raw(pattern), bson.Raw(value))
}

// duplicateIndexKey reports the encoded key k of doc that collided in ix.
// With an array on the path, keyValue is the element that collided (as
// mongod reports it), not the array's first element.
func duplicateIndexKey(c *Collection, ix *Index, doc bson.Raw, k []byte) error {
	vals := make([]bsoncore.Value, len(ix.Fields))
	var find func(i int, prefix []byte) bool
	find = func(i int, prefix []byte) bool {
		if i == len(ix.Fields) {
			return bytes.Equal(prefix, k)
		}
		vs, _ := pathValues(bsoncore.Document(doc), ix.Fields[i].Path)
		for _, v := range vs {
			p := keyenc.Append(append([]byte(nil), prefix...), v)
			if bytes.HasPrefix(k, p) {
				vals[i] = v
				if find(i+1, p) {
					return true
				}
			}
		}
		return false
	}
	if !find(0, nil) {
		for i, f := range ix.Fields {
			vs, _ := pathValues(bsoncore.Document(doc), f.Path)
			vals[i] = vs[0]
		}
	}
	b := bsoncore.NewDocumentBuilder()
	for i, f := range ix.Fields {
		b.AppendValue(f.Path, vals[i])
	}
	return newDup(c, ix.Name, ix.KeyPattern(), bson.Raw(b.Build()))
}

func newDup(c *Collection, index string, pattern, value bson.Raw) error {
	msg := fmt.Sprintf("E11000 duplicate key error collection: %s index: %s dup key: %s", c.NS(), index, ShellString(value))
	return &DuplicateKeyError{Err: mongoerr.New(mongoerr.CodeDuplicateKey, "%s", msg), KeyPattern: pattern, KeyValue: value}
}

// ShellString renders a document the way mongod's messages do:
// { _id: 1, name: "x" }.
func ShellString(doc bson.Raw) string {
	var sb strings.Builder
	writeDoc(&sb, bsoncore.Document(doc))
	return sb.String()
}

func writeDoc(sb *strings.Builder, d bsoncore.Document) {
	elems, _ := d.Elements()
	if len(elems) == 0 {
		sb.WriteString("{}")
		return
	}
	sb.WriteString("{ ")
	for i, el := range elems {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(el.Key())
		sb.WriteString(": ")
		writeValue(sb, el.Value())
	}
	sb.WriteString(" }")
}

// ValueString renders one value as ShellString does inside a document.
func ValueString(v bsoncore.Value) string {
	var sb strings.Builder
	writeValue(&sb, v)
	return sb.String()
}

func writeValue(sb *strings.Builder, v bsoncore.Value) {
	switch v.Type {
	case bsoncore.TypeString:
		sb.WriteString(strconv.Quote(v.StringValue()))
	case bsoncore.TypeInt32:
		sb.WriteString(strconv.Itoa(int(v.Int32())))
	case bsoncore.TypeInt64:
		sb.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bsoncore.TypeDouble:
		writeDouble(sb, v.Double())
	case bsoncore.TypeObjectID:
		fmt.Fprintf(sb, "ObjectId('%s')", bson.ObjectID(v.ObjectID()).Hex())
	case bsoncore.TypeNull:
		sb.WriteString("null")
	case bsoncore.TypeBoolean:
		sb.WriteString(strconv.FormatBool(v.Boolean()))
	case bsoncore.TypeDateTime:
		fmt.Fprintf(sb, "new Date(%d)", v.DateTime())
	case bsoncore.TypeEmbeddedDocument:
		writeDoc(sb, v.Document())
	case bsoncore.TypeUndefined:
		sb.WriteString("undefined")
	case bsoncore.TypeArray:
		vals, _ := v.Array().Values()
		if len(vals) == 0 {
			sb.WriteString("[]")
			return
		}
		sb.WriteString("[ ")
		for i, e := range vals {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeValue(sb, e)
		}
		sb.WriteString(" ]")
	default:
		sb.WriteString(v.String())
	}
}

// writeDouble formats x as mongod's StringBuilder::appendDoubleNice does:
// printf's %.16g, then ".0" unless the text has '.', 'E' or 'N' (so 2.0
// prints as 2.0 and infinity, printed "inf" by glibc, as inf.0).
func writeDouble(sb *strings.Builder, x float64) {
	var s string
	switch {
	case math.IsNaN(x):
		s = "nan"
	case math.IsInf(x, 1):
		s = "inf"
	case math.IsInf(x, -1):
		s = "-inf"
	default:
		s = strconv.FormatFloat(x, 'g', 16, 64)
	}
	sb.WriteString(s)
	if !strings.ContainsAny(s, ".EN") {
		sb.WriteString(".0")
	}
}
