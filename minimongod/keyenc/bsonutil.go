package keyenc

import (
	"encoding/binary"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// iter walks document or array elements; malformed input ends the walk.
type iter struct{ rest []byte }

func newIter(doc []byte) iter {
	if len(doc) < 5 {
		return iter{}
	}
	n := int(int32(binary.LittleEndian.Uint32(doc)))
	if n < 5 || n > len(doc) {
		return iter{}
	}
	return iter{rest: doc[4 : n-1]}
}

func (it *iter) next() (key []byte, v bsoncore.Value, ok bool) {
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

// strBytes returns the bytes of a BSON string value, tolerating bad input.
func strBytes(data []byte) []byte {
	if len(data) < 5 {
		return nil
	}
	n := int(int32(binary.LittleEndian.Uint32(data)))
	if n < 1 || 4+n > len(data) {
		return nil
	}
	return data[4 : 4+n-1]
}

// cstrings splits regex data into its two C strings.
func cstrings(data []byte) (a, b []byte) {
	i := 0
	for i < len(data) && data[i] != 0 {
		i++
	}
	a = data[:i]
	if i >= len(data) {
		return a, nil
	}
	rest := data[i+1:]
	j := 0
	for j < len(rest) && rest[j] != 0 {
		j++
	}
	return a, rest[:j]
}

// pad returns data extended with zeros to at least n bytes.
func pad(data []byte, n int) []byte {
	if len(data) >= n {
		return data
	}
	return append(append([]byte{}, data...), make([]byte, n-len(data))...)
}

// fixed64 reads a little-endian uint64, zero-padding short input.
func fixed64(data []byte) uint64 { return binary.LittleEndian.Uint64(pad(data, 8)) }

func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
