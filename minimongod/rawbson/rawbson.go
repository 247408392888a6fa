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

// Nesting returns how many levels of documents and arrays hold elements
// below value v, stopping once it passes limit, at least 0 (the
// answer is then limit+1): 0 for a scalar or an empty document, 1 for {a: 1} and for
// {a: {}}, 2 for {a: {b: 1}}. Update paths are checked with it: an element
// at level L whose value nests N levels puts elements at level L+N.
func Nesting(v bsoncore.Value, limit int) int {
	if v.Type != bsoncore.TypeEmbeddedDocument && v.Type != bsoncore.TypeArray {
		return 0
	}
	deepest, it := 0, NewIter(v.Data)
	for {
		_, c, ok := it.Next()
		if !ok {
			return deepest
		}
		if limit < 1 {
			return limit + 1
		}
		deepest = max(deepest, 1+Nesting(c, limit-1))
		if deepest > limit {
			return limit + 1
		}
	}
}

// Levels returns how many levels of documents and arrays doc spans, doc
// itself the first and an empty one counting as a level, stopping once it
// passes limit (the answer is then limit+1): 1 for {} and {a: 1}, 2 for
// {a: {}}. Inserted documents are checked with it.
func Levels(doc []byte, limit int) int {
	if limit < 1 {
		return 1
	}
	deepest, it := 1, NewIter(doc)
	for {
		_, c, ok := it.Next()
		if !ok {
			return deepest
		}
		if c.Type == bsoncore.TypeEmbeddedDocument || c.Type == bsoncore.TypeArray {
			deepest = max(deepest, 1+Levels(c.Data, limit-1))
			if deepest > limit {
				return limit + 1
			}
		}
	}
}
