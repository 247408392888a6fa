package workload

import (
	"encoding/binary"
	"math/bits"
)

// The documents wtd writes are built straight in BSON, into buffers that are
// reused from batch to batch and from operation to operation.
//
// A padded document is {_id: <int64>, pad: BinData(0, <random bytes>)}:
//
//	int32 length | 0x12 "_id\0" int64 | 0x05 "pad\0" int32 n, 0x00, n bytes | 0x00
const (
	padDocOverhead  = 4 + (1 + 4 + 8) + (1 + 4 + 4 + 1) + 1 // 28
	minDocBytes     = 32
	maxDocBytes     = 16 * 1024 * 1024 // MongoDB's maximum BSON document size
	bsonTypeBinary  = 0x05
	bsonTypeInt64   = 0x12
	bsonTypeDoc     = 0x03
	idFilterBytes   = 4 + (1 + 4 + 8) + 1 // {_id: int64}
	idFilterValueAt = 4 + 1 + 4
)

// padBytes returns how many random bytes make a padded document docBytes
// long.
func padBytes(docBytes int) int { return docBytes - padDocOverhead }

// appendPadDoc appends a padded document {_id: id, pad: <n random bytes>}
// to dst.
func appendPadDoc(dst []byte, id int64, n int, r *padRand) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(padDocOverhead+n))
	dst = append(dst, bsonTypeInt64, '_', 'i', 'd', 0)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(id))
	dst = appendRandomBinary(dst, "pad", n, r)
	return append(dst, 0)
}

// appendRandomBinary appends a binary element (generic subtype) of n random
// bytes named key.
func appendRandomBinary(dst []byte, key string, n int, r *padRand) []byte {
	dst = append(dst, bsonTypeBinary)
	dst = append(dst, key...)
	dst = append(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, 0) // subtype: generic binary
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	r.fill(dst[start:])
	return dst
}

// newIDFilter returns the document {_id: int64(0)}; setFilterID changes the
// id in place.
func newIDFilter() []byte {
	d := make([]byte, 0, idFilterBytes)
	d = binary.LittleEndian.AppendUint32(d, idFilterBytes)
	d = append(d, bsonTypeInt64, '_', 'i', 'd', 0)
	d = binary.LittleEndian.AppendUint64(d, 0)
	return append(d, 0)
}

// setFilterID sets the _id of a document made by newIDFilter.
func setFilterID(filter []byte, id int64) {
	binary.LittleEndian.PutUint64(filter[idFilterValueAt:], uint64(id))
}

// newPadUpdate returns the update {$set: {pad: <n random bytes>}} and the
// offset of its random bytes, which refillPadUpdate renews in place.
func newPadUpdate(n int, r *padRand) (doc []byte, randomAt int) {
	inner := 4 + (1 + 4 + 4 + 1 + n) + 1
	total := 4 + (1 + 5 + inner) + 1
	d := make([]byte, 0, total)
	d = binary.LittleEndian.AppendUint32(d, uint32(total))
	d = append(d, bsonTypeDoc, '$', 's', 'e', 't', 0)
	d = binary.LittleEndian.AppendUint32(d, uint32(inner))
	d = appendRandomBinary(d, "pad", n, r)
	d = append(d, 0, 0)
	return d, total - 2 - n
}

// padRand fills buffers with pseudo-random bytes at several GB/s: a Weyl
// sequence mixed by a 64x64->128-bit multiply (the wyrand construction).
// It is not for cryptography; it only has to defeat block compression and
// to cost far less than the server does to store the bytes.
type padRand struct{ s uint64 }

const (
	padRandIncrement = 0xa0761d6478bd642f
	padRandMix       = 0xe7037ed1a0b428db
)

func (r *padRand) next() uint64 {
	r.s += padRandIncrement
	hi, lo := bits.Mul64(r.s, r.s^padRandMix)
	return hi ^ lo
}

// fill overwrites p with random bytes.
func (r *padRand) fill(p []byte) {
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, r.next())
		p = p[8:]
	}
	if len(p) > 0 {
		var tail [8]byte
		binary.LittleEndian.PutUint64(tail[:], r.next())
		copy(p, tail[:])
	}
}
