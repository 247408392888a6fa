package wire

import "go.mongodb.org/mongo-driver/v2/bson"

// opReplyFixed is the size of OP_REPLY's fields after the header:
// responseFlags, cursorID, startingFrom, numberReturned.
const opReplyFixed = 4 + 8 + 4 + 4

// Reply is a decoded OP_REPLY, the legacy reply to OP_QUERY. Servers never
// receive one; it is decoded by clients and tests.
type Reply struct {
	Header        Header
	ResponseFlags int32
	CursorID      int64
	StartingFrom  int32
	Documents     []bson.Raw
}

// DecodeReply decodes b, which must hold exactly one whole OP_REPLY. The
// number of documents must match numberReturned and every document is
// fully validated. Like Decode, the result aliases b and errors are
// *DecodeError.
func DecodeReply(b []byte) (*Reply, error) {
	h, err := decodeHeader(b)
	if err == nil && h.OpCode != OpReply {
		err = &UnsupportedOpCodeError{OpCode: h.OpCode}
	}
	if err != nil {
		return nil, &DecodeError{Header: h, Err: err}
	}
	r := &Reply{Header: h}
	if err := decodeReplyBody(r, b[HeaderSize:]); err != nil {
		return nil, &DecodeError{Header: h, Err: err}
	}
	return r, nil
}

// decodeReplyBody decodes the fields after the header of an OP_REPLY.
func decodeReplyBody(r *Reply, p []byte) error {
	if len(p) < opReplyFixed {
		return malformed("OP_REPLY fields truncated")
	}
	r.ResponseFlags = int32(le.Uint32(p))
	r.CursorID = int64(le.Uint64(p[4:]))
	r.StartingFrom = int32(le.Uint32(p[12:]))
	n := int(int32(le.Uint32(p[16:])))
	docs, err := readDocs(p[opReplyFixed:])
	if err != nil {
		return err
	}
	if len(docs) != n {
		return malformed("OP_REPLY numberReturned %d, found %d documents", n, len(docs))
	}
	r.Documents = docs
	return nil
}
