package wire

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// doc marshals v into a BSON document, failing the test on error.
func doc(t testing.TB, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// rawMsg assembles an OP_MSG from already encoded sections, with a correct
// header length.
func rawMsg(flags uint32, sections ...[]byte) []byte {
	b := make([]byte, HeaderSize, 64)
	le.PutUint32(b[4:], 7)
	le.PutUint32(b[12:], uint32(OpMsg))
	b = le.AppendUint32(b, flags)
	for _, s := range sections {
		b = append(b, s...)
	}
	return fixLen(b)
}

// fixLen sets the header length of b to len(b).
func fixLen(b []byte) []byte {
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// sec0 encodes a kind-0 section.
func sec0(d []byte) []byte { return append([]byte{0}, d...) }

// sec1 encodes a kind-1 section with a correct size.
func sec1(id string, docs ...[]byte) []byte {
	return appendSequence(nil, Sequence{Identifier: id, Docs: rawDocs(docs)})
}

// sec1Raw encodes a kind-1 section with an explicit size and payload.
func sec1Raw(size int32, payload []byte) []byte {
	b := le.AppendUint32([]byte{1}, uint32(size))
	return append(b, payload...)
}

// rawDocs converts byte slices to bson.Raw.
func rawDocs(docs [][]byte) []bson.Raw {
	out := make([]bson.Raw, len(docs))
	for i, d := range docs {
		out[i] = d
	}
	return out
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// i32 encodes v little-endian.
func i32(v int32) []byte { return le.AppendUint32(nil, uint32(v)) }

// withChecksum sets ChecksumPresent on an OP_MSG and appends its CRC-32C.
func withChecksum(b []byte) []byte {
	b = append([]byte(nil), b...)
	le.PutUint32(b[HeaderSize:], le.Uint32(b[HeaderSize:])|ChecksumPresent)
	le.PutUint32(b, uint32(len(b)+4))
	return le.AppendUint32(b, crcOf(b))
}

// queryMsg assembles an OP_QUERY from its raw tail after the flags.
func queryMsg(tail ...[]byte) []byte {
	b := make([]byte, HeaderSize)
	le.PutUint32(b[12:], uint32(OpQuery))
	return fixLen(append(b, cat(tail...)...))
}

// crcOf computes the CRC-32C used by OP_MSG checksums.
func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// setLen overwrites the header length of a copy of b with n.
func setLen(b []byte, n int32) []byte {
	b = append([]byte(nil), b...)
	le.PutUint32(b, uint32(n))
	return b
}

// nested returns a document nested depth levels deep, counting itself.
func nested(t testing.TB, depth int) bson.Raw {
	var v any = int32(1)
	for range depth {
		v = bson.D{{Key: "a", Value: v}}
	}
	return doc(t, v)
}
