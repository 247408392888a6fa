package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxSequences bounds the kind-1 sections accepted in one OP_MSG. Drivers
// send at most two (bulkWrite's "ops" and "nsInfo").
const maxSequences = 64

var le = binary.LittleEndian

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Decode decodes b, which must hold exactly one whole message including its
// 16-byte header. It accepts OP_MSG and OP_QUERY; any other opcode yields an
// error wrapping *UnsupportedOpCodeError.
//
// Everything is validated: the header length must equal len(b), an OP_MSG
// must have exactly one kind-0 section, well-formed kind-1 sections with
// distinct identifiers, no unknown required flag bits and, when
// ChecksumPresent is set, a matching CRC-32C. Every BSON document (body,
// sequence documents, query and field selector) is fully validated,
// including nested documents (nesting is limited to 200 levels; string
// contents are not checked for valid UTF-8, and per-document size limits
// such as MaxBSONObjectSize are left to the command layer). At most 64
// kind-1 sections are accepted. Errors are *DecodeError.
//
// The returned Message aliases b: the caller must not modify or reuse b
// while the Message is in use. Decode never retains b otherwise.
func Decode(b []byte) (*Message, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return nil, &DecodeError{Header: h, Err: err}
	}
	m := &Message{Header: h}
	switch h.OpCode {
	case OpMsg:
		err = decodeMsg(m, b)
	case OpQuery:
		err = decodeQuery(m, b)
	default:
		err = &UnsupportedOpCodeError{OpCode: h.OpCode}
	}
	if err != nil {
		return nil, &DecodeError{Header: h, Err: err}
	}
	return m, nil
}

// decodeHeader reads the header of b and checks its length field.
func decodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, malformed("message of %d bytes is shorter than a header", len(b))
	}
	h := Header{
		MessageLength: int32(le.Uint32(b)),
		RequestID:     int32(le.Uint32(b[4:])),
		ResponseTo:    int32(le.Uint32(b[8:])),
		OpCode:        int32(le.Uint32(b[12:])),
	}
	if int(h.MessageLength) != len(b) {
		return h, malformed("header length %d, have %d bytes", h.MessageLength, len(b))
	}
	return h, nil
}

// decodeMsg decodes the OP_MSG body of b into m.
func decodeMsg(m *Message, b []byte) error {
	if len(b) < HeaderSize+4 {
		return malformed("OP_MSG flag bits truncated")
	}
	m.FlagBits = le.Uint32(b[HeaderSize:])
	if unknown := m.FlagBits & requiredFlagMask &^ knownFlags; unknown != 0 {
		return fmt.Errorf("check flag bits 0x%x: %w", unknown, ErrUnknownRequiredFlag)
	}
	end := len(b)
	if m.FlagBits&ChecksumPresent != 0 {
		if err := verifyChecksum(b); err != nil {
			return err
		}
		end -= 4
	}
	return decodeSections(m, b[HeaderSize+4:end])
}

// verifyChecksum checks the trailing CRC-32C of an OP_MSG.
func verifyChecksum(b []byte) error {
	if len(b) < HeaderSize+4+4 {
		return malformed("OP_MSG checksum truncated")
	}
	end := len(b) - 4
	want := le.Uint32(b[end:])
	if got := crc32.Checksum(b[:end], castagnoli); got != want {
		return fmt.Errorf("verify checksum 0x%08x, computed 0x%08x: %w", want, got, ErrChecksumMismatch)
	}
	return nil
}

// decodeSections parses the OP_MSG sections in p.
func decodeSections(m *Message, p []byte) error {
	haveBody := false
	for off := 0; off < len(p); {
		kind := p[off]
		off++
		var n int
		var err error
		switch kind {
		case 0:
			if haveBody {
				return malformed("second kind-0 section at offset %d", off-1)
			}
			haveBody = true
			m.Body, n, err = readDoc(p[off:])
		case 1:
			n, err = readSequence(m, p[off:])
		default:
			return malformed("unknown section kind %d at offset %d", kind, off-1)
		}
		if err != nil {
			return err
		}
		off += n
	}
	if !haveBody {
		return malformed("OP_MSG has no kind-0 section")
	}
	return nil
}

// readDoc reads and fully validates the document at the start of p.
func readDoc(p []byte) (bson.Raw, int, error) {
	n, err := docLength(p)
	if err != nil {
		return nil, 0, err
	}
	d := p[:n:n]
	if err := validateDoc(d, 1); err != nil {
		return nil, 0, err
	}
	return bson.Raw(d), n, nil
}

// readSequence reads the kind-1 section at the start of p into m and
// returns its size.
func readSequence(m *Message, p []byte) (int, error) {
	if len(m.Sequences) >= maxSequences {
		return 0, malformed("more than %d document sequences", maxSequences)
	}
	if len(p) < 4 {
		return 0, malformed("document sequence size truncated")
	}
	size := int(int32(le.Uint32(p)))
	if size < 5 || size > len(p) {
		return 0, malformed("document sequence size %d out of range [5, %d]", size, len(p))
	}
	p = p[4:size]
	k := bytes.IndexByte(p, 0)
	if k < 0 {
		return 0, malformed("document sequence identifier is not NUL-terminated")
	}
	id := p[:k]
	if hasSequence(m.Sequences, id) {
		return 0, malformed("duplicate document sequence %q", id)
	}
	docs, err := readDocs(p[k+1:])
	if err != nil {
		return 0, fmt.Errorf("read document sequence %q: %w", id, err)
	}
	m.Sequences = append(m.Sequences, Sequence{Identifier: string(id), Docs: docs})
	return size, nil
}

// hasSequence reports whether seqs already has identifier id.
func hasSequence(seqs []Sequence, id []byte) bool {
	for _, s := range seqs {
		if s.Identifier == string(id) {
			return true
		}
	}
	return false
}

// readDocs splits p, which must consist of whole documents, validating each.
func readDocs(p []byte) ([]bson.Raw, error) {
	count, err := countDocs(p)
	if err != nil || count == 0 {
		return nil, err
	}
	docs := make([]bson.Raw, 0, count)
	for len(p) > 0 {
		d, n, err := readDoc(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
		p = p[n:]
	}
	return docs, nil
}

// countDocs walks the length prefixes of the documents in p, checking that
// they tile p exactly, and returns how many there are.
func countDocs(p []byte) (int, error) {
	count := 0
	for len(p) > 0 {
		n, err := docLength(p)
		if err != nil {
			return 0, err
		}
		p = p[n:]
		count++
	}
	return count, nil
}

// decodeQuery decodes the OP_QUERY body of b into m.
func decodeQuery(m *Message, b []byte) error {
	p := b[HeaderSize:]
	if len(p) < 4 {
		return malformed("OP_QUERY flags truncated")
	}
	m.Flags = int32(le.Uint32(p))
	name, p, err := readCString(p[4:])
	if err != nil {
		return err
	}
	m.FullCollectionName = name
	if len(p) < 8 {
		return malformed("OP_QUERY numberToSkip/numberToReturn truncated")
	}
	m.NumberToSkip = int32(le.Uint32(p))
	m.NumberToReturn = int32(le.Uint32(p[4:]))
	return decodeQueryDocs(m, p[8:])
}

// decodeQueryDocs reads the query and optional field selector from p.
func decodeQueryDocs(m *Message, p []byte) error {
	q, n, err := readDoc(p)
	if err != nil {
		return fmt.Errorf("read query: %w", err)
	}
	m.Query, p = q, p[n:]
	if len(p) == 0 {
		return nil
	}
	if m.ReturnFieldsSelector, n, err = readDoc(p); err != nil {
		return fmt.Errorf("read returnFieldsSelector: %w", err)
	}
	if n != len(p) {
		return malformed("%d trailing bytes after OP_QUERY", len(p)-n)
	}
	return nil
}

// readCString reads a NUL-terminated string from p, returning a copy and
// the rest of p.
func readCString(p []byte) (string, []byte, error) {
	k := bytes.IndexByte(p, 0)
	if k < 0 {
		return "", nil, malformed("cstring is not NUL-terminated")
	}
	return string(p[:k]), p[k+1:], nil
}
