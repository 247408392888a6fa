package query

import (
	"encoding/hex"
	"strconv"
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// typeNames are mongod's BSON type names, as used in error messages.
var typeNames = map[bsoncore.Type]string{
	bsoncore.TypeDouble: "double", bsoncore.TypeString: "string",
	bsoncore.TypeEmbeddedDocument: "object", bsoncore.TypeArray: "array",
	bsoncore.TypeBinary: "binData", bsoncore.TypeUndefined: "undefined",
	bsoncore.TypeObjectID: "objectId", bsoncore.TypeBoolean: "bool",
	bsoncore.TypeDateTime: "date", bsoncore.TypeNull: "null",
	bsoncore.TypeRegex: "regex", bsoncore.TypeDBPointer: "dbPointer",
	bsoncore.TypeJavaScript: "javascript", bsoncore.TypeSymbol: "symbol",
	bsoncore.TypeCodeWithScope: "javascriptWithScope", bsoncore.TypeInt32: "int",
	bsoncore.TypeTimestamp: "timestamp", bsoncore.TypeInt64: "long",
	bsoncore.TypeDecimal128: "decimal", bsoncore.TypeMinKey: "minKey",
	bsoncore.TypeMaxKey: "maxKey",
}

// TypeName returns mongod's name for a BSON type ("int", "string", ...).
func TypeName(t bsoncore.Type) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "unknown"
}

// formatValue renders v roughly as mongod prints values in error messages.
func formatValue(v bsoncore.Value) string {
	var sb strings.Builder
	writeValue(&sb, v, 0)
	return sb.String()
}

// formatElem renders "key: value".
func formatElem(key string, v bsoncore.Value) string {
	return key + ": " + formatValue(v)
}

// writeValue appends v's rendering to sb.
func writeValue(sb *strings.Builder, v bsoncore.Value, depth int) {
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64:
		i, _ := intOf(v)
		sb.WriteString(strconv.FormatInt(i, 10))
	case bsoncore.TypeDouble:
		writeDouble(sb, floatOf(v))
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		sb.WriteString(strconv.Quote(string(rawbson.StringBytes(v.Data))))
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
		writeContainer(sb, v, depth)
	case bsoncore.TypeObjectID:
		sb.WriteString("ObjectId('" + hex.EncodeToString(v.Data) + "')")
	case bsoncore.TypeBoolean:
		sb.WriteString(strconv.FormatBool(truthy(v)))
	case bsoncore.TypeNull:
		sb.WriteString("null")
	case bsoncore.TypeUndefined:
		sb.WriteString("undefined")
	case bsoncore.TypeDateTime:
		sb.WriteString("new Date(" + strconv.FormatInt(fixedInt64(v.Data), 10) + ")")
	case bsoncore.TypeDecimal128:
		lo, hi := fixedUint64(v.Data), fixedUint64(v.Data[min(8, len(v.Data)):])
		sb.WriteString("NumberDecimal(\"" + bson.NewDecimal128(hi, lo).String() + "\")")
	case bsoncore.TypeMinKey:
		sb.WriteString("MinKey")
	case bsoncore.TypeMaxKey:
		sb.WriteString("MaxKey")
	default:
		sb.WriteString(v.String())
	}
}

// writeDouble renders a double with a trailing ".0" for integral values.
func writeDouble(sb *strings.Builder, f float64) {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	sb.WriteString(s)
}

// writeContainer renders a document as {a: 1} or an array as [ 1, 2 ].
func writeContainer(sb *strings.Builder, v bsoncore.Value, depth int) {
	arr := v.Type == bsoncore.TypeArray
	if depth > 20 {
		sb.WriteString("...")
		return
	}
	if arr && len(v.Data) <= 5 {
		sb.WriteString("[]")
		return
	}
	open, close := "{", "}"
	if arr {
		open, close = "[ ", " ]"
	}
	sb.WriteString(open)
	it := rawbson.NewIter(v.Data)
	n := 0
	for {
		k, e, ok := it.Next()
		if !ok {
			break
		}
		if n > 0 {
			sb.WriteString(", ")
		}
		if !arr {
			sb.Write(k)
			sb.WriteString(": ")
		}
		writeValue(sb, e, depth+1)
		n++
	}
	sb.WriteString(close)
}
