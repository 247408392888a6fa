package wire

import (
	"bytes"
	"encoding/binary"
)

// maxBSONDepth bounds document nesting accepted on the wire, counting the
// top-level document as depth 1, matching mongod's default maxBSONDepth.
const maxBSONDepth = 200

// fixedSize gives the value size of fixed-width BSON types; -1 marks types
// whose size must be read from the data.
var fixedSize = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for typ, n := range map[byte]int8{
		0x01: 8, 0x06: 0, 0x07: 12, 0x08: 1, 0x09: 8, 0x0a: 0,
		0x10: 4, 0x11: 8, 0x12: 8, 0x13: 16, 0xff: 0, 0x7f: 0,
	} {
		t[typ] = n
	}
	return t
}()

// docLength reads the length prefix of a document at the start of p and
// checks that it lies within p and is at least the minimal 5 bytes.
func docLength(p []byte) (int, error) {
	if len(p) < 4 {
		return 0, malformed("document length prefix truncated: %d bytes left", len(p))
	}
	n := int(int32(binary.LittleEndian.Uint32(p)))
	if n < 5 || n > len(p) {
		return 0, malformed("document length %d out of range [5, %d]", n, len(p))
	}
	return n, nil
}

// checkDocShape checks that d, exactly one document long, ends in a NUL.
func checkDocShape(d []byte) error {
	if d[len(d)-1] != 0 {
		return malformed("document of %d bytes lacks terminating NUL", len(d))
	}
	return nil
}

// validateDoc fully validates d, which must be exactly one BSON document:
// length prefix, terminator, every element's type, key and value size,
// recursing into embedded documents, arrays and code-with-scope. String
// contents are not checked for UTF-8 validity.
func validateDoc(d []byte, depth int) error {
	if depth > maxBSONDepth {
		return malformed("document nested deeper than %d", maxBSONDepth)
	}
	if n, err := docLength(d); err != nil {
		return err
	} else if n != len(d) {
		return malformed("document length %d, want %d", n, len(d))
	}
	if err := checkDocShape(d); err != nil {
		return err
	}
	for p := d[4 : len(d)-1]; len(p) > 0; {
		n, err := elementSize(p, depth)
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// elementSize validates the element at the start of p and returns its size.
func elementSize(p []byte, depth int) (int, error) {
	k := bytes.IndexByte(p[1:], 0)
	if k < 0 {
		return 0, malformed("element key is not NUL-terminated")
	}
	head := k + 2
	n, err := valueSize(p[0], p[head:], depth)
	return head + n, err
}

// valueSize validates a value of BSON type t at the start of p and returns
// its size.
func valueSize(t byte, p []byte, depth int) (int, error) {
	if n := int(fixedSize[t]); n >= 0 {
		return fixedValueSize(t, p, n)
	}
	switch t {
	case 0x02, 0x0d, 0x0e: // string, JavaScript code, symbol
		return stringSize(p)
	case 0x03, 0x04: // embedded document, array
		return embeddedSize(p, depth)
	case 0x05:
		return binarySize(p)
	case 0x0b: // regex: pattern and options cstrings
		return regexSize(p)
	case 0x0c: // DBPointer: string and ObjectId
		return dbPointerSize(p)
	case 0x0f:
		return codeWithScopeSize(p, depth)
	}
	return 0, malformed("unknown BSON type 0x%02x", t)
}

// fixedValueSize checks that p holds n bytes of a fixed-width value.
func fixedValueSize(t byte, p []byte, n int) (int, error) {
	if len(p) < n {
		return 0, malformed("BSON value of type 0x%02x truncated", t)
	}
	if t == 0x08 && p[0] > 1 {
		return 0, malformed("invalid BSON boolean %d", p[0])
	}
	return n, nil
}

// stringSize validates a BSON string (int32 length including NUL, bytes).
func stringSize(p []byte) (int, error) {
	if len(p) < 4 {
		return 0, malformed("BSON string length truncated")
	}
	n := int(int32(binary.LittleEndian.Uint32(p)))
	if n < 1 || n > len(p)-4 {
		return 0, malformed("BSON string length %d out of range", n)
	}
	if p[4+n-1] != 0 {
		return 0, malformed("BSON string lacks terminating NUL")
	}
	return 4 + n, nil
}

// embeddedSize validates an embedded document or array.
func embeddedSize(p []byte, depth int) (int, error) {
	n, err := docLength(p)
	if err != nil {
		return 0, err
	}
	return n, validateDoc(p[:n], depth+1)
}

// binarySize validates BSON binary data (int32 length, subtype, bytes).
func binarySize(p []byte) (int, error) {
	if len(p) < 5 {
		return 0, malformed("BSON binary header truncated")
	}
	n := int(int32(binary.LittleEndian.Uint32(p)))
	if n < 0 || n > len(p)-5 {
		return 0, malformed("BSON binary length %d out of range", n)
	}
	return 5 + n, nil
}

// regexSize validates a BSON regular expression (two cstrings).
func regexSize(p []byte) (int, error) {
	a := bytes.IndexByte(p, 0)
	if a < 0 {
		return 0, malformed("BSON regex pattern is not NUL-terminated")
	}
	b := bytes.IndexByte(p[a+1:], 0)
	if b < 0 {
		return 0, malformed("BSON regex options are not NUL-terminated")
	}
	return a + b + 2, nil
}

// dbPointerSize validates a BSON DBPointer (string, 12-byte ObjectId).
func dbPointerSize(p []byte) (int, error) {
	n, err := stringSize(p)
	if err != nil {
		return 0, err
	}
	if len(p)-n < 12 {
		return 0, malformed("BSON DBPointer id truncated")
	}
	return n + 12, nil
}

// codeWithScopeSize validates BSON code-with-scope (int32 total length,
// string, document), requiring the parts to fill the total exactly.
func codeWithScopeSize(p []byte, depth int) (int, error) {
	if len(p) < 4 {
		return 0, malformed("BSON code-with-scope length truncated")
	}
	total := int(int32(binary.LittleEndian.Uint32(p)))
	if total < 4+5+5 || total > len(p) {
		return 0, malformed("BSON code-with-scope length %d out of range", total)
	}
	inner := p[4:total]
	s, err := stringSize(inner)
	if err != nil {
		return 0, err
	}
	if err := validateDoc(inner[s:], depth+1); err != nil {
		return 0, err
	}
	return total, nil
}
