// Package wire implements the server side of MongoDB's wire protocol
// framing: reading and decoding request messages (OP_MSG and the legacy
// OP_QUERY used for the initial handshake) and appending replies (OP_MSG
// and OP_REPLY) into caller-owned buffers.
//
// Decoded messages alias the bytes they were decoded from: a Message's
// documents, sequences and identifiers point into the input buffer (strings
// are copied). The caller must not overwrite or reuse that buffer while the
// Message, or any bson.Raw obtained from it, is still in use.
//
// Client-side builders (AppendQuery, AppendMsgSequences) and DecodeReply are
// provided for tests and for components that talk to a server.
package wire

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// Opcodes defined by the MongoDB wire protocol.
const (
	OpReply       int32 = 1
	OpUpdate      int32 = 2001
	OpInsert      int32 = 2002
	OpQuery       int32 = 2004
	OpGetMore     int32 = 2005
	OpDelete      int32 = 2006
	OpKillCursors int32 = 2007
	OpCompressed  int32 = 2012
	OpMsg         int32 = 2013
)

// Size limits, as advertised by mongod in its hello reply.
const (
	// DefaultMaxMessageSize is mongod's maxMessageSizeBytes.
	DefaultMaxMessageSize = 48000000
	// MaxBSONObjectSize is mongod's maxBsonObjectSize.
	MaxBSONObjectSize = mongoerr.MaxBSONObjectSize
)

// HeaderSize is the size in bytes of the standard message header.
const HeaderSize = 16

// OP_MSG flag bits.
const (
	// ChecksumPresent means the message ends with a CRC-32C checksum.
	ChecksumPresent uint32 = 1 << 0
	// MoreToCome means the sender will not wait for a reply (on requests)
	// or that more replies follow without further requests (on replies).
	MoreToCome uint32 = 1 << 1
	// ExhaustAllowed means the client accepts exhaust (moreToCome) replies.
	ExhaustAllowed uint32 = 1 << 16
)

// requiredFlagMask covers the OP_MSG flag bits a parser must understand;
// bits 16-31 are optional and may be ignored.
const requiredFlagMask uint32 = 0xffff

// knownFlags are the required bits this package understands.
const knownFlags = ChecksumPresent | MoreToCome

// Header is the standard header that starts every message.
type Header struct {
	MessageLength int32
	RequestID     int32
	ResponseTo    int32
	OpCode        int32
}

// Sequence is an OP_MSG kind-1 section: a named run of documents, such as
// the "documents" of an insert command.
type Sequence struct {
	Identifier string
	Docs       []bson.Raw
}

// Message is a decoded request. Which fields are set depends on
// Header.OpCode: the OP_MSG group for OpMsg, the OP_QUERY group for OpQuery.
// Documents alias the buffer the message was decoded from.
type Message struct {
	Header Header

	// OP_MSG.
	FlagBits  uint32
	Body      bson.Raw // the single kind-0 section
	Sequences []Sequence

	// OP_QUERY.
	Flags                int32
	FullCollectionName   string
	NumberToSkip         int32
	NumberToReturn       int32
	Query                bson.Raw
	ReturnFieldsSelector bson.Raw // nil when absent
}

// MoreToCome reports whether an OP_MSG request has the moreToCome flag set,
// in which case the server must not send a reply.
func (m *Message) MoreToCome() bool {
	return m.Header.OpCode == OpMsg && m.FlagBits&MoreToCome != 0
}

// Command returns the command document and its document sequences. For
// OP_MSG that is the kind-0 body and the kind-1 sections. For OP_QUERY it is
// the query, unwrapped from a {$query: {...}} (or {query: {...}}) envelope
// when present, and no sequences.
func (m *Message) Command() (body bson.Raw, seqs []Sequence) {
	if m.Header.OpCode == OpQuery {
		return unwrapQuery(m.Query), nil
	}
	return m.Body, m.Sequences
}

// unwrapQuery returns the document under a leading "$query" or "query" key,
// or q itself.
func unwrapQuery(q bson.Raw) bson.Raw {
	e, err := bsoncore.Document(q).IndexErr(0)
	if err != nil {
		return q
	}
	if k := e.Key(); k != "$query" && k != "query" {
		return q
	}
	if d, ok := e.Value().DocumentOK(); ok {
		return bson.Raw(d)
	}
	return q
}

// DB returns the database the request addresses: the "$db" field of an
// OP_MSG body, or the part of an OP_QUERY namespace before the first dot
// ("admin" for "admin.$cmd"). It returns "" when there is none.
func (m *Message) DB() string {
	if m.Header.OpCode == OpQuery {
		db, _, _ := strings.Cut(m.FullCollectionName, ".")
		return db
	}
	v, err := m.Body.LookupErr("$db")
	if err != nil {
		return ""
	}
	s, _ := v.StringValueOK()
	return s
}
