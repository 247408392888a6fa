package storage

import (
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

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

func duplicateIndexKey(c *Collection, ix *Index, doc bson.Raw) error {
	b := bsoncore.NewDocumentBuilder()
	for _, f := range ix.Fields {
		vals, _ := pathValues(bsoncore.Document(doc), f.Path)
		b.AppendValue(f.Path, vals[0])
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

func writeValue(sb *strings.Builder, v bsoncore.Value) {
	switch v.Type {
	case bsoncore.TypeString:
		sb.WriteString(strconv.Quote(v.StringValue()))
	case bsoncore.TypeInt32:
		sb.WriteString(strconv.Itoa(int(v.Int32())))
	case bsoncore.TypeInt64:
		sb.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bsoncore.TypeDouble:
		sb.WriteString(strconv.FormatFloat(v.Double(), 'g', -1, 64))
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
	case bsoncore.TypeArray:
		vals, _ := v.Array().Values()
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
