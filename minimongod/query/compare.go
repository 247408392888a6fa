package query

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// CanonicalType returns mongod's canonical type rank for t: values of types
// with different ranks order by rank; values of one rank compare by value.
// Undefined ranks with null.
func CanonicalType(t bsoncore.Type) int {
	switch t {
	case bsoncore.TypeMinKey:
		return -1
	case bsoncore.TypeNull, bsoncore.TypeUndefined:
		return 5
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return 10
	case bsoncore.TypeString, bsoncore.TypeSymbol:
		return 15
	case bsoncore.TypeEmbeddedDocument:
		return 20
	case bsoncore.TypeArray:
		return 25
	case bsoncore.TypeBinary:
		return 30
	case bsoncore.TypeObjectID:
		return 35
	case bsoncore.TypeBoolean:
		return 40
	case bsoncore.TypeDateTime:
		return 45
	case bsoncore.TypeTimestamp:
		return 47
	case bsoncore.TypeRegex:
		return 50
	case bsoncore.TypeDBPointer:
		return 55
	case bsoncore.TypeJavaScript:
		return 60
	case bsoncore.TypeCodeWithScope:
		return 65
	case bsoncore.TypeMaxKey:
		return 127
	}
	return 0
}

// Compare orders two BSON values as mongod does: first by canonical type,
// then by value (numbers across numeric types, documents and arrays element
// by element). It returns -1, 0 or +1.
func Compare(a, b bsoncore.Value) int {
	ca, cb := CanonicalType(a.Type), CanonicalType(b.Type)
	if ca != cb {
		return sign(ca - cb)
	}
	return compareSameRank(a, b)
}

// compareSameRank compares two values of the same canonical type.
func compareSameRank(a, b bsoncore.Value) int {
	switch a.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		return compareNumbers(a, b)
	case bsoncore.TypeString, bsoncore.TypeSymbol, bsoncore.TypeJavaScript:
		return bytes.Compare(rawbson.StringBytes(a.Data), rawbson.StringBytes(b.Data))
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
		return compareDocs(a.Data, b.Data)
	case bsoncore.TypeBinary:
		return compareBinary(a.Data, b.Data)
	case bsoncore.TypeObjectID, bsoncore.TypeBoolean:
		return bytes.Compare(a.Data, b.Data)
	case bsoncore.TypeDateTime:
		return cmpInt(fixedInt64(a.Data), fixedInt64(b.Data))
	case bsoncore.TypeTimestamp:
		return cmpUint(fixedUint64(a.Data), fixedUint64(b.Data))
	case bsoncore.TypeRegex:
		return compareRegex(a.Data, b.Data)
	case bsoncore.TypeDBPointer:
		return compareBinary(a.Data, b.Data)
	case bsoncore.TypeCodeWithScope:
		return compareCodeWithScope(a.Data, b.Data)
	}
	return 0
}

// compareDocs compares documents (or arrays) element by element: canonical
// type, then field name, then value; a shorter document sorts first.
func compareDocs(a, b []byte) int {
	ia, ib := rawbson.NewIter(a), rawbson.NewIter(b)
	for {
		ka, va, oka := ia.Next()
		kb, vb, okb := ib.Next()
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return -1
		case !okb:
			return 1
		}
		if c := sign(CanonicalType(va.Type) - CanonicalType(vb.Type)); c != 0 {
			return c
		}
		if c := bytes.Compare(ka, kb); c != 0 {
			return c
		}
		if c := compareSameRank(va, vb); c != 0 {
			return c
		}
	}
}

// compareBinary orders by length, then by the remaining bytes (binary:
// subtype then payload; dbpointer: namespace then ObjectId).
func compareBinary(a, b []byte) int {
	if len(a) < 4 || len(b) < 4 {
		return cmpInt(int64(len(a)), int64(len(b)))
	}
	la := int32(binary.LittleEndian.Uint32(a))
	lb := int32(binary.LittleEndian.Uint32(b))
	if la != lb {
		return cmpInt(int64(la), int64(lb))
	}
	return bytes.Compare(a[4:], b[4:])
}

// compareRegex orders by pattern, then by options.
func compareRegex(a, b []byte) int {
	pa, oa := rawbson.RegexParts(a)
	pb, ob := rawbson.RegexParts(b)
	if c := bytes.Compare(pa, pb); c != 0 {
		return c
	}
	return bytes.Compare(oa, ob)
}

// compareCodeWithScope orders by code, then by scope document.
func compareCodeWithScope(a, b []byte) int {
	ca, sa := splitCodeWithScope(a)
	cb, sb := splitCodeWithScope(b)
	if c := bytes.Compare(ca, cb); c != 0 {
		return c
	}
	return compareDocs(sa, sb)
}

// splitCodeWithScope returns the code bytes and scope document.
func splitCodeWithScope(d []byte) (code, scope []byte) {
	if len(d) < 4 {
		return nil, nil
	}
	s := d[4:]
	code = rawbson.StringBytes(s)
	if len(s) < 4 {
		return code, nil
	}
	n := int(int32(binary.LittleEndian.Uint32(s)))
	if n < 0 || 4+n > len(s) {
		return code, nil
	}
	return code, s[4+n:]
}

// compareNumbers compares numeric values exactly across numeric types.
// NaN is equal to NaN and sorts below every other number.
func compareNumbers(a, b bsoncore.Value) int {
	if a.Type == bsoncore.TypeDecimal128 || b.Type == bsoncore.TypeDecimal128 {
		return compareExact(a, b)
	}
	ai, aInt := intOf(a)
	bi, bInt := intOf(b)
	switch {
	case aInt && bInt:
		return cmpInt(ai, bi)
	case aInt:
		return -compareFloatInt(floatOf(b), ai)
	case bInt:
		return compareFloatInt(floatOf(a), bi)
	}
	return compareFloats(floatOf(a), floatOf(b))
}

// intOf returns the value of an int32 or int64.
func intOf(v bsoncore.Value) (int64, bool) {
	switch v.Type {
	case bsoncore.TypeInt32:
		if len(v.Data) < 4 {
			return 0, true
		}
		return int64(int32(binary.LittleEndian.Uint32(v.Data))), true
	case bsoncore.TypeInt64:
		return fixedInt64(v.Data), true
	}
	return 0, false
}

// floatOf returns the value of a double.
func floatOf(v bsoncore.Value) float64 {
	return math.Float64frombits(fixedUint64(v.Data))
}

// compareFloats orders doubles with NaN lowest and -0 equal to 0.
func compareFloats(a, b float64) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareFloatInt compares a double with an int64 exactly.
func compareFloatInt(f float64, i int64) int {
	switch {
	case f != f:
		return -1
	case f >= 0x1p63:
		return 1
	case f < -0x1p63:
		return -1
	}
	fi := float64(i)
	if f < fi {
		return -1
	}
	if f > fi {
		return 1
	}
	return cmpInt(int64(f), i)
}

// numClass ranks the non-finite numbers around the finite ones.
const (
	classNaN = iota
	classNegInf
	classFinite
	classPosInf
)

// exactNumber converts a number to (class, exact rational value).
func exactNumber(v bsoncore.Value) (int, *big.Rat) {
	if i, ok := intOf(v); ok {
		return classFinite, new(big.Rat).SetInt64(i)
	}
	if v.Type == bsoncore.TypeDouble {
		f := floatOf(v)
		switch {
		case f != f:
			return classNaN, nil
		case math.IsInf(f, 1):
			return classPosInf, nil
		case math.IsInf(f, -1):
			return classNegInf, nil
		}
		return classFinite, new(big.Rat).SetFloat64(f)
	}
	return exactDecimal(v)
}

// exactDecimal converts a decimal128 value to (class, exact rational value).
func exactDecimal(v bsoncore.Value) (int, *big.Rat) {
	if len(v.Data) < 16 {
		return classNaN, nil
	}
	lo := binary.LittleEndian.Uint64(v.Data)
	hi := binary.LittleEndian.Uint64(v.Data[8:])
	d := bson.NewDecimal128(hi, lo)
	if d.IsNaN() {
		return classNaN, nil
	}
	if inf := d.IsInf(); inf != 0 {
		if inf > 0 {
			return classPosInf, nil
		}
		return classNegInf, nil
	}
	coef, exp, err := d.BigInt()
	if err != nil {
		return classNaN, nil
	}
	r := new(big.Rat).SetInt(coef)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(absInt(exp))), nil)
	if exp >= 0 {
		return classFinite, r.Mul(r, new(big.Rat).SetInt(p))
	}
	return classFinite, r.Quo(r, new(big.Rat).SetInt(p))
}

// compareExact compares numbers via exact rationals (used for decimal128).
func compareExact(a, b bsoncore.Value) int {
	ca, ra := exactNumber(a)
	cb, rb := exactNumber(b)
	if ca != cb || ca != classFinite {
		return sign(ca - cb)
	}
	return ra.Cmp(rb)
}

func fixedInt64(d []byte) int64 { return int64(fixedUint64(d)) }

func fixedUint64(d []byte) uint64 {
	if len(d) < 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(d)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// toFloat converts any numeric value to the nearest float64.
func toFloat(v bsoncore.Value) (float64, bool) {
	if i, ok := intOf(v); ok {
		return float64(i), true
	}
	switch v.Type {
	case bsoncore.TypeDouble:
		return floatOf(v), true
	case bsoncore.TypeDecimal128:
		c, r := exactDecimal(v)
		switch c {
		case classNaN:
			return math.NaN(), true
		case classNegInf:
			return math.Inf(-1), true
		case classPosInf:
			return math.Inf(1), true
		}
		f, _ := r.Float64()
		return f, true
	}
	return 0, false
}
