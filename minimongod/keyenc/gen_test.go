package keyenc_test

import (
	"math"
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// source yields pseudo-random choices, from math/rand or from fuzz bytes.
type source interface{ intn(n int) int }

type randSource struct{ r *rand.Rand }

func (s randSource) intn(n int) int { return s.r.IntN(n) }

type byteSource struct{ b []byte }

func (s *byteSource) intn(n int) int {
	if len(s.b) == 0 {
		return 0
	}
	v := int(s.b[0])
	if len(s.b) > 1 {
		v = v<<8 | int(s.b[1])
		s.b = s.b[2:]
	} else {
		s.b = s.b[1:]
	}
	return v % n
}

var (
	specialFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 3, 1e300, -1e300,
		math.Inf(1), math.Inf(-1), math.NaN(), 0x1p53, 0x1p53 + 2, -0x1p53, 0x1p63, -0x1p63,
		0x1p62, 9.223372036854775e18, math.SmallestNonzeroFloat64, 2.5, 1e-300}
	specialInts = []int64{0, 1, -1, 3, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1,
		1<<53 + 1, 1<<53 - 1, 1 << 53, -(1<<53 + 1), 1<<62 + 1, 1<<63 - 1024, 1<<63 - 1025,
		1<<63 - 513, -(1<<63 - 1), math.MaxInt32, math.MinInt32, 2}
	strs  = []string{"", "a", "ab", "a\x00", "a\x00b", "a\x01", "\x00", "\xff", "b", "aa"}
	names = []string{"a", "b", "ab", "", "_id"}
)

// genValue builds a random BSON value of mixed types, nested to depth.
func genValue(s source, depth int) bsoncore.Value {
	k := s.intn(22)
	if depth <= 0 && (k == 8 || k == 9 || k == 20) {
		k = 3
	}
	switch k {
	case 0:
		return bsoncore.Value{Type: bsoncore.TypeMinKey}
	case 1:
		return bsoncore.Value{Type: bsoncore.TypeMaxKey}
	case 2:
		return bsoncore.Value{Type: bsoncore.TypeNull}
	case 3:
		return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(s.intn(7)-3))}
	case 4:
		return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, genInt(s))}
	case 5:
		return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, genFloat(s))}
	case 6:
		return bsoncore.Value{Type: bsoncore.TypeString, Data: bsoncore.AppendString(nil, strs[s.intn(len(strs))])}
	case 7:
		return bsoncore.Value{Type: bsoncore.TypeSymbol, Data: bsoncore.AppendSymbol(nil, strs[s.intn(len(strs))])}
	case 8:
		return genDoc(s, depth-1)
	case 9:
		return genArray(s, depth-1)
	case 10:
		b := []byte(strs[s.intn(len(strs))])
		return bsoncore.Value{Type: bsoncore.TypeBinary, Data: bsoncore.AppendBinary(nil, byte(s.intn(3)), b)}
	case 11:
		var id [12]byte
		id[s.intn(12)] = byte(s.intn(256))
		return bsoncore.Value{Type: bsoncore.TypeObjectID, Data: id[:]}
	case 12:
		return bsoncore.Value{Type: bsoncore.TypeBoolean, Data: bsoncore.AppendBoolean(nil, s.intn(2) == 1)}
	case 13:
		return bsoncore.Value{Type: bsoncore.TypeDateTime, Data: bsoncore.AppendDateTime(nil, genInt(s))}
	case 14:
		return bsoncore.Value{Type: bsoncore.TypeTimestamp, Data: bsoncore.AppendTimestamp(nil, uint32(s.intn(3))<<30, uint32(s.intn(3)))}
	case 15:
		return bsoncore.Value{Type: bsoncore.TypeRegex, Data: bsoncore.AppendRegex(nil, names[s.intn(len(names))], []string{"", "i", "im"}[s.intn(3)])}
	case 16:
		return bsoncore.Value{Type: bsoncore.TypeUndefined}
	case 17:
		return bsoncore.Value{Type: bsoncore.TypeJavaScript, Data: bsoncore.AppendJavaScript(nil, strs[s.intn(len(strs))])}
	case 18:
		var id [12]byte
		id[0] = byte(s.intn(3))
		return bsoncore.Value{Type: bsoncore.TypeDBPointer, Data: bsoncore.AppendDBPointer(nil, names[s.intn(len(names))], id)}
	case 19:
		return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(genInt(s)))}
	case 20:
		scope := genDoc(s, depth-1)
		return bsoncore.Value{Type: bsoncore.TypeCodeWithScope, Data: bsoncore.AppendCodeWithScope(nil, strs[s.intn(len(strs))], scope.Data)}
	}
	return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, float64(s.intn(7)-3)/2)}
}

// genInt returns an int64 near interesting boundaries.
func genInt(s source) int64 {
	v := specialInts[s.intn(len(specialInts))]
	return v + int64(s.intn(5)-2)
}

// genFloat returns a double near interesting boundaries.
func genFloat(s source) float64 {
	f := specialFloats[s.intn(len(specialFloats))]
	switch s.intn(4) {
	case 0:
		return math.Nextafter(f, math.Inf(1))
	case 1:
		return math.Nextafter(f, math.Inf(-1))
	case 2:
		return float64(genInt(s))
	}
	return f
}

func genDoc(s source, depth int) bsoncore.Value {
	idx, d := bsoncore.AppendDocumentStart(nil)
	for i := s.intn(4); i > 0; i-- {
		d = bsoncore.AppendValueElement(d, names[s.intn(len(names))], genValue(s, depth))
	}
	d, _ = bsoncore.AppendDocumentEnd(d, idx)
	return bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: d}
}

func genArray(s source, depth int) bsoncore.Value {
	var vals []bsoncore.Value
	for i := s.intn(4); i > 0; i-- {
		vals = append(vals, genValue(s, depth))
	}
	return bsoncore.Value{Type: bsoncore.TypeArray, Data: bsoncore.BuildArray(nil, vals...)}
}
