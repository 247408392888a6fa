// Package keyenc owns minimongod's order-preserving index key encoding: a
// BSON value is encoded so that bytes.Compare on encodings agrees with
// MongoDB's BSON comparison order (query.Compare). Encodings are
// self-delimiting, so concatenated encodings (compound keys such as
// enc(field) + enc(_id)) compare like tuples.
package keyenc

import (
	"encoding/binary"
	"math"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Type tags, one per canonical type bracket, in BSON comparison order.
const (
	tagEnd       = 0x00 // ends a document or array
	tagMinKey    = 0x01
	tagNull      = 0x05 // null and undefined
	tagNumber    = 0x0A // every numeric type, NaN included
	tagString    = 0x0F // string and symbol
	tagDocument  = 0x14
	tagArray     = 0x19
	tagBinary    = 0x1E
	tagObjectID  = 0x23
	tagBool      = 0x28
	tagDate      = 0x2D
	tagTimestamp = 0x2F
	tagRegex     = 0x32
	tagDBPointer = 0x37
	tagCode      = 0x3C
	tagCodeScope = 0x41
	tagMaxKey    = 0x7F
)

// tagOf returns the tag for a BSON type (0 for unknown types).
func tagOf(t bsoncore.Type) byte {
	switch t {
	case bsoncore.TypeMinKey:
		return tagMinKey
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return tagNull
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return tagNumber
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		return tagString
	case bsoncore.TypeEmbeddedDocument:
		return tagDocument
	case bsoncore.TypeArray:
		return tagArray
	case bsoncore.TypeBinary:
		return tagBinary
	case bsoncore.TypeObjectID:
		return tagObjectID
	case bsoncore.TypeBoolean:
		return tagBool
	case bsoncore.TypeDateTime:
		return tagDate
	case bsoncore.TypeTimestamp:
		return tagTimestamp
	case bsoncore.TypeRegex:
		return tagRegex
	case bsoncore.TypeDBPointer:
		return tagDBPointer
	case bsoncore.TypeJavaScript:
		return tagCode
	case bsoncore.TypeCodeWithScope:
		return tagCodeScope
	case bsoncore.TypeMaxKey:
		return tagMaxKey
	}
	return tagEnd
}

// Append appends the order-preserving encoding of v to dst.
//
// Numbers of every type encode by value, so int32(3), int64(3) and 3.0 are
// identical; -0.0 equals 0.0 and NaN sorts below -Inf. int64 values are
// exact; decimal128 values are encoded through their nearest double, so
// decimals that no double represents are only ordered approximately.
func Append(dst []byte, v bsoncore.Value) []byte {
	dst = append(dst, tagOf(v.Type))
	return appendBody(dst, v)
}

// appendBody appends the encoding of v without its tag.
func appendBody(dst []byte, v bsoncore.Value) []byte {
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return appendNumber(dst, v)
	case bsoncore.TypeString, bsoncore.TypeSymbol, bsoncore.TypeJavaScript:
		return appendString(dst, rawbson.StringBytes(v.Data))
	case bsoncore.TypeEmbeddedDocument:
		return appendDoc(dst, v.Data, true)
	case bsoncore.TypeArray:
		return appendDoc(dst, v.Data, false)
	case bsoncore.TypeBinary, bsoncore.TypeDBPointer:
		return appendSized(dst, v.Data)
	case bsoncore.TypeObjectID, bsoncore.TypeBoolean:
		return append(dst, v.Data...)
	case bsoncore.TypeDateTime:
		return binary.BigEndian.AppendUint64(dst, fixed64(v.Data)^(1<<63))
	case bsoncore.TypeTimestamp:
		return binary.BigEndian.AppendUint64(dst, fixed64(v.Data))
	case bsoncore.TypeRegex:
		return appendRegex(dst, v.Data)
	case bsoncore.TypeCodeWithScope:
		return appendCodeWithScope(dst, v.Data)
	}
	return dst
}

// appendNumber encodes a number as (d, r): d is the value truncated toward
// zero to a double, r the exact int64 remainder (non-zero only for int64s
// that no double holds). Both parts are fixed-width and order-preserving.
func appendNumber(dst []byte, v bsoncore.Value) []byte {
	var d float64
	var r int64
	switch v.Type {
	case bsoncore.TypeInt32:
		d = float64(int32(binary.LittleEndian.Uint32(pad(v.Data, 4))))
	case bsoncore.TypeInt64:
		d, r = splitInt64(int64(fixed64(v.Data)))
	case bsoncore.TypeDouble:
		d = math.Float64frombits(fixed64(v.Data))
	case bsoncore.TypeDecimal128:
		d = decimalFloat(v.Data)
	}
	if d != d {
		return append(dst, make([]byte, 16)...)
	}
	if d == 0 {
		d = 0 // folds -0 into +0
	}
	bits := math.Float64bits(d)
	if bits>>63 == 1 {
		bits = ^bits
	} else {
		bits |= 1 << 63
	}
	dst = binary.BigEndian.AppendUint64(dst, bits)
	return binary.BigEndian.AppendUint64(dst, uint64(r)^(1<<63))
}

// splitInt64 returns i truncated toward zero to a double, and the rest.
func splitInt64(i int64) (float64, int64) {
	f := float64(i)
	if i > 0 && (f >= 0x1p63 || int64(f) > i) || i < 0 && int64(f) < i {
		f = math.Nextafter(f, 0)
	}
	return f, i - int64(f)
}

// decimalFloat converts decimal128 bytes to the nearest double.
func decimalFloat(data []byte) float64 {
	data = pad(data, 16)
	d := bson.NewDecimal128(binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data))
	switch {
	case d.IsNaN():
		return math.NaN()
	case d.IsInf() > 0:
		return math.Inf(1)
	case d.IsInf() < 0:
		return math.Inf(-1)
	}
	// Out-of-range exponents parse to ±Inf or 0, which is the nearest double.
	f, _ := parseFloat(d.String())
	return f
}

// appendString escapes 0x00 as 0x00 0xFF and terminates with 0x00 0x01.
func appendString(dst, s []byte) []byte {
	for _, c := range s {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, 0, 1)
}

// appendDoc encodes each element as tag, name (documents only) and body,
// then tagEnd. Names are C strings, so a 0x00 terminator preserves order.
func appendDoc(dst, doc []byte, names bool) []byte {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return append(dst, tagEnd)
		}
		dst = append(dst, tagOf(v.Type))
		if names {
			dst = append(append(dst, k...), 0)
		}
		dst = appendBody(dst, v)
	}
}

// appendSized encodes length-prefixed data (binary, dbpointer): length
// first, as mongod orders them, then the remaining bytes.
func appendSized(dst, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	return append(dst, data...)
}

// appendRegex encodes pattern and options as terminated C strings.
func appendRegex(dst, data []byte) []byte {
	pat, opts := rawbson.RegexParts(data)
	dst = append(append(dst, pat...), 0)
	return append(append(dst, opts...), 0)
}

// appendCodeWithScope encodes the code string then the scope document.
func appendCodeWithScope(dst, data []byte) []byte {
	if len(data) < 4 {
		return appendDoc(appendString(dst, nil), nil, true)
	}
	s := data[4:]
	code := rawbson.StringBytes(s)
	var scope []byte
	if len(s) >= 4 {
		n := int(int32(binary.LittleEndian.Uint32(s)))
		if n >= 0 && 4+n <= len(s) {
			scope = s[4+n:]
		}
	}
	return appendDoc(appendString(dst, code), scope, true)
}
