package ftdc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BSON element types the walker knows.
const (
	tDouble     = 0x01
	tString     = 0x02
	tDocument   = 0x03
	tArray      = 0x04
	tBinary     = 0x05
	tUndefined  = 0x06
	tObjectID   = 0x07
	tBool       = 0x08
	tDate       = 0x09
	tNull       = 0x0A
	tRegex      = 0x0B
	tDBPointer  = 0x0C
	tCode       = 0x0D
	tSymbol     = 0x0E
	tCodeScope  = 0x0F
	tInt32      = 0x10
	tTimestamp  = 0x11
	tInt64      = 0x12
	tDecimal128 = 0x13
	tMinKey     = 0xFF
	tMaxKey     = 0x7F
)

// maxDepth bounds the nesting the walker follows. mongod stops at 11 levels
// of documents; the limit here only keeps hostile input from exhausting the
// stack.
const maxDepth = 100

var errDepth = fmt.Errorf("documents nested deeper than %d levels", maxDepth)

// element is one element of a BSON document: its type, key and value bytes.
type element struct {
	typ   byte
	key   []byte
	value []byte
}

// elements iterates over the elements of one BSON document without
// allocating. It checks every length against the bytes it has.
type elements struct {
	doc []byte
	pos int
	err error
}

// newElements starts iterating doc, which must hold exactly one document.
func newElements(doc []byte) elements {
	if len(doc) < 5 {
		return elements{err: errors.New("document shorter than 5 bytes")}
	}
	n := int(int32(binary.LittleEndian.Uint32(doc)))
	if n != len(doc) {
		return elements{err: fmt.Errorf("document length %d, have %d bytes", n, len(doc))}
	}
	if doc[n-1] != 0 {
		return elements{err: errors.New("document does not end with a 0 byte")}
	}
	return elements{doc: doc[:n-1], pos: 4}
}

// next returns the next element; false at the end or on an error (see err).
func (it *elements) next() (element, bool) {
	if it.err != nil || it.pos >= len(it.doc) {
		return element{}, false
	}
	typ := it.doc[it.pos]
	it.pos++
	start := it.pos
	for it.pos < len(it.doc) && it.doc[it.pos] != 0 {
		it.pos++
	}
	if it.pos >= len(it.doc) {
		it.err = errors.New("element key runs past the end of its document")
		return element{}, false
	}
	key := it.doc[start:it.pos]
	it.pos++
	size, err := valueSize(typ, it.doc[it.pos:])
	if err != nil {
		it.err = fmt.Errorf("element %q: %w", key, err)
		return element{}, false
	}
	v := it.doc[it.pos : it.pos+size]
	it.pos += size
	return element{typ: typ, key: key, value: v}, true
}

// valueSize is the length of a value of type typ at the start of b.
func valueSize(typ byte, b []byte) (int, error) {
	fixed := -1
	switch typ {
	case tDouble, tDate, tInt64, tTimestamp:
		fixed = 8
	case tInt32:
		fixed = 4
	case tDecimal128:
		fixed = 16
	case tObjectID:
		fixed = 12
	case tBool:
		fixed = 1
	case tUndefined, tNull, tMinKey, tMaxKey:
		fixed = 0
	}
	if fixed >= 0 {
		if len(b) < fixed {
			return 0, errors.New("value runs past the end of its document")
		}
		return fixed, nil
	}
	switch typ {
	case tString, tCode, tSymbol:
		return stringSize(b, 0)
	case tDBPointer:
		n, err := stringSize(b, 0)
		if err != nil || len(b) < n+12 {
			return 0, errors.New("dbpointer runs past the end of its document")
		}
		return n + 12, nil
	case tDocument, tArray, tCodeScope:
		if len(b) < 5 {
			return 0, errors.New("document runs past the end of its parent")
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 5 || n > len(b) {
			return 0, fmt.Errorf("document length %d out of range", n)
		}
		return n, nil
	case tBinary:
		if len(b) < 5 {
			return 0, errors.New("binary runs past the end of its document")
		}
		n := int(int32(binary.LittleEndian.Uint32(b)))
		if n < 0 || n > len(b)-5 {
			return 0, fmt.Errorf("binary length %d out of range", n)
		}
		return n + 5, nil
	case tRegex:
		i := 0
		for k := 0; k < 2; k++ {
			for i < len(b) && b[i] != 0 {
				i++
			}
			if i >= len(b) {
				return 0, errors.New("regex runs past the end of its document")
			}
			i++
		}
		return i, nil
	}
	return 0, fmt.Errorf("unknown BSON type 0x%02x", typ)
}

// stringSize is the size of a BSON string (int32 length, bytes, 0) at b[at:].
func stringSize(b []byte, at int) (int, error) {
	if len(b)-at < 5 {
		return 0, errors.New("string runs past the end of its document")
	}
	n := int(int32(binary.LittleEndian.Uint32(b[at:])))
	if n < 1 || n > len(b)-at-4 || b[at+4+n-1] != 0 {
		return 0, fmt.Errorf("string length %d out of range", n)
	}
	return 4 + n, nil
}

// validate checks that doc is a well-formed BSON document all the way down
// (lengths and types; strings are not checked for UTF-8).
func validate(doc []byte) error { return validateDepth(doc, 0) }

func validateDepth(doc []byte, depth int) error {
	if depth > maxDepth {
		return errDepth
	}
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			return it.err
		}
		if e.typ == tDocument || e.typ == tArray {
			if err := validateDepth(e.value, depth+1); err != nil {
				return err
			}
		}
	}
}

// isMetric reports whether an element of type typ holds metrics (numbers,
// booleans, dates, timestamps) or documents that may hold some. These are
// the types mongod's FTDC compressor looks at; it passes over all others.
func isMetric(typ byte) bool {
	switch typ {
	case tDouble, tInt32, tInt64, tDecimal128, tBool, tDate, tTimestamp, tDocument, tArray:
		return true
	}
	return false
}

// doubleToInt64 converts a double as mongod's FTDC does: NaN is 0, values
// beyond the int64 range are its ends, others lose their fraction.
func doubleToInt64(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f <= math.MinInt64:
		return math.MinInt64
	case f >= math.MaxInt64: // 2^63 as a float64
		return math.MaxInt64
	}
	return int64(f)
}

// decimalToInt64 converts a decimal128 to the nearest int64 (ties to even),
// clamped to the int64 range; NaN is 0.
func decimalToInt64(b []byte) int64 {
	d := bson.NewDecimal128(binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b))
	coef, exp, err := d.BigInt()
	if err != nil { // NaN, or infinity
		if d.IsInf() > 0 {
			return math.MaxInt64
		}
		if d.IsInf() < 0 {
			return math.MinInt64
		}
		return 0
	}
	r := new(big.Rat).SetInt(coef)
	if exp > 0 {
		if exp > 40 {
			exp = 40 // far beyond the int64 range already, unless coef is 0
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)))
	} else if exp < 0 {
		if exp < -80 {
			return 0 // |value| < 10^34 * 10^-80
		}
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-exp)), nil)))
	}
	n := roundHalfEven(r)
	switch {
	case n.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case n.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return n.Int64()
}

func roundHalfEven(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	// r = q + m/den with |m| < den and m of r's sign.
	twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	c := twice.Cmp(r.Denom())
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}
