// Package rawbson reads BSON bytes without decoding them: element
// iteration and the parts of string and regex values, tolerating malformed
// input (a walk over bad bytes simply ends). The query matcher and the key
// encoder run on it per document, so it allocates nothing.
package rawbson

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Iter walks the elements of a document or array.
type Iter struct{ rest []byte }

// NewIter starts a walk over doc's elements.
func NewIter(doc []byte) Iter {
	if len(doc) < 5 {
		return Iter{}
	}
	n := int(int32(binary.LittleEndian.Uint32(doc)))
	if n < 5 || n > len(doc) {
		return Iter{}
	}
	return Iter{rest: doc[4 : n-1]}
}

// Next returns the next element's key and value; ok is false at the end or
// on malformed input.
func (it *Iter) Next() (key []byte, v bsoncore.Value, ok bool) {
	r := it.rest
	if len(r) < 2 {
		return nil, v, false
	}
	end := 1
	for end < len(r) && r[end] != 0 {
		end++
	}
	if end >= len(r) {
		it.rest = nil
		return nil, v, false
	}
	v, rem, ok := bsoncore.ReadValue(r[end+1:], bsoncore.Type(r[0]))
	if !ok {
		it.rest = nil
		return nil, v, false
	}
	it.rest = rem
	return r[1:end], v, true
}

// StringBytes returns the bytes of a BSON string (or JavaScript, symbol)
// value without its length and terminating NUL.
func StringBytes(data []byte) []byte {
	if len(data) < 5 {
		return nil
	}
	n := int(int32(binary.LittleEndian.Uint32(data)))
	if n < 1 || 4+n > len(data) {
		return nil
	}
	return data[4 : 4+n-1]
}

// RegexParts splits a regex value into its pattern and options.
func RegexParts(data []byte) (pattern, options []byte) {
	i := 0
	for i < len(data) && data[i] != 0 {
		i++
	}
	pattern = data[:i]
	if i >= len(data) {
		return pattern, nil
	}
	rest := data[i+1:]
	j := 0
	for j < len(rest) && rest[j] != 0 {
		j++
	}
	return pattern, rest[:j]
}
