package query

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/rawbson"
)

// valueSet holds values for membership tests under Compare's equality (1,
// 1.0 and NumberLong(1) are one value, {a: 1} and {a: 1.0} too): a hash
// that equal values share picks a bucket, and Compare decides within it.
// Adding n values and testing m costs O(n+m) hashes, where a scan of a
// slice costs O(n·m) comparisons.
type valueSet struct {
	seed    maphash.Seed
	buckets map[uint64][]bsoncore.Value
	// compares counts the Compare calls made inside buckets.
	compares int
}

func newValueSet(capacity int) *valueSet {
	return &valueSet{seed: maphash.MakeSeed(), buckets: make(map[uint64][]bsoncore.Value, capacity)}
}

// add puts v in the set (a value equal to one already in it is kept too).
func (s *valueSet) add(v bsoncore.Value) {
	h := s.hash(v)
	s.buckets[h] = append(s.buckets[h], v)
}

// contains reports whether the set holds a value Compare finds equal to v.
func (s *valueSet) contains(v bsoncore.Value) bool {
	for _, x := range s.buckets[s.hash(v)] {
		s.compares++
		if Compare(x, v) == 0 {
			return true
		}
	}
	return false
}

func (s *valueSet) hash(v bsoncore.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	hashValue(&h, v)
	return h.Sum64()
}

// hashValue writes what Compare looks at when it finds two values equal:
// the canonical type rank and, within the rank, the value as Compare reads
// it. Two values Compare finds equal write the same bytes.
func hashValue(h *maphash.Hash, v bsoncore.Value) {
	h.WriteByte(byte(CanonicalType(v.Type)))
	switch v.Type {
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble, bsoncore.TypeDecimal128:
		hashNumber(h, v)
	case bsoncore.TypeString, bsoncore.TypeSymbol, bsoncore.TypeJavaScript:
		h.Write(rawbson.StringBytes(v.Data))
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
		hashDoc(h, v.Data)
	case bsoncore.TypeBinary, bsoncore.TypeDBPointer:
		// compareBinary: the length, then the bytes after it.
		if len(v.Data) >= 4 {
			h.Write(v.Data)
		} else {
			h.WriteByte(byte(len(v.Data)))
		}
	case bsoncore.TypeObjectID, bsoncore.TypeBoolean, bsoncore.TypeDateTime, bsoncore.TypeTimestamp:
		h.Write(v.Data)
	case bsoncore.TypeRegex:
		p, o := rawbson.RegexParts(v.Data)
		h.Write(p)
		h.WriteByte(0)
		h.Write(o)
	case bsoncore.TypeCodeWithScope:
		code, scope := splitCodeWithScope(v.Data)
		h.Write(code)
		h.WriteByte(0)
		hashDoc(h, scope)
	}
	// Null, undefined, MinKey, MaxKey: the rank says it all.
}

// hashNumber writes a number as the float64 nearest to it: equal numbers,
// of any numeric types, are one rational and round to one float64; -0 is
// written as 0 and every NaN alike, as Compare finds them equal.
func hashNumber(h *maphash.Hash, v bsoncore.Value) {
	f, _ := toFloat(v)
	switch {
	case f != f:
		f = math.NaN()
	case f == 0:
		f = 0
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(f))
	h.Write(b[:])
}

// hashDoc writes a document or array as compareDocs reads it: each
// element's type rank, name and value.
func hashDoc(h *maphash.Hash, doc []byte) {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		h.Write(k)
		h.WriteByte(0)
		hashValue(h, v)
	}
}
