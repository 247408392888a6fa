package ftdc

import (
	"encoding/binary"
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Doc rebuilds sample s of the chunk as mongod recorded it: the reference
// document with each metric's value replaced by its value in sample s, in
// its own BSON type (a double holds the integer FTDC kept, a decimal the
// same), but for a 32-bit integer whose value no longer fits, which becomes
// a 64-bit one. Strings and everything else that is not a metric are the
// reference document's.
func (c *Chunk) Doc(s int) (bson.Raw, error) {
	if s < 0 || s >= c.Samples {
		return nil, fmt.Errorf("sample %d of a chunk of %d", s, c.Samples)
	}
	m := 0
	doc, err := c.appendDoc(make([]byte, 0, len(c.Ref)+64), c.Ref, s, &m, 0)
	if err != nil {
		return nil, fmt.Errorf("rebuild sample %d: %w", s, err)
	}
	if m != len(c.Names) {
		return nil, fmt.Errorf("rebuild sample %d: %d metrics in the reference document, the chunk has %d", s, m, len(c.Names))
	}
	return doc, nil
}

// appendDoc appends doc to dst with its metrics, in document order from
// metric *m, those of sample s.
func (c *Chunk) appendDoc(dst, doc []byte, s int, m *int, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	it := newElements(doc)
	for {
		e, ok := it.next()
		if !ok {
			if it.err != nil {
				return nil, it.err
			}
			break
		}
		typ, val := e.typ, e.value
		head := len(dst)
		dst = append(append(append(dst, typ), e.key...), 0)
		switch {
		case !isMetric(typ):
			dst = append(dst, val...)
			continue
		case typ == tDocument || typ == tArray:
			var err error
			if dst, err = c.appendDoc(dst, val, s, m, depth+1); err != nil {
				return nil, err
			}
			continue
		}
		n := 1
		if typ == tTimestamp {
			n = 2
		}
		if *m+n > len(c.Names) {
			return nil, fmt.Errorf("more metrics than the chunk's %d", len(c.Names))
		}
		v := c.Values[*m*c.Samples+s]
		switch typ {
		case tDouble:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(float64(v)))
		case tInt32:
			if v == int64(int32(v)) {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(int32(v)))
			} else {
				dst[head] = tInt64
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
			}
		case tInt64, tDate:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		case tBool:
			b := byte(0)
			if v != 0 {
				b = 1
			}
			dst = append(dst, b)
		case tDecimal128:
			hi, lo := uint64(0x3040)<<48, uint64(v) // exponent 0
			if v < 0 {
				hi, lo = hi|1<<63, uint64(-v)
			}
			dst = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(dst, lo), hi)
		case tTimestamp:
			inc := c.Values[(*m+1)*c.Samples+s]
			dst = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(dst, uint32(inc)), uint32(v))
		}
		*m += n
	}
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst, nil
}
