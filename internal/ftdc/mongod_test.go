package ftdc

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"
)

// sampleDoc returns chunk c's sample s as a whole document: the reference
// with each metric's value replaced by the sample's, each in its own type
// (an int32 that no longer fits becomes an int64, as in mongod's sample).
func sampleDoc(t testing.TB, c *Chunk, s int) []byte {
	m := 0
	next := func() int64 { v := c.Metric(m)[s]; m++; return v }
	var build func(out, d []byte) []byte
	build = func(out, d []byte) []byte {
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		it := newElements(d)
		for {
			e, ok := it.next()
			if !ok {
				if it.err != nil {
					t.Fatal(it.err)
				}
				break
			}
			typ, v := e.typ, e.value
			var b8 [8]byte
			switch typ {
			case tDocument, tArray:
				out = append(append(append(out, typ), e.key...), 0)
				out = build(out, v)
				continue
			case tDouble:
				binary.LittleEndian.PutUint64(b8[:], math.Float64bits(float64(next())))
				v = b8[:]
			case tInt32:
				if x := next(); x == int64(int32(x)) {
					binary.LittleEndian.PutUint32(b8[:], uint32(x))
					v = b8[:4]
				} else {
					typ = tInt64
					binary.LittleEndian.PutUint64(b8[:], uint64(x))
					v = b8[:]
				}
			case tInt64, tDate:
				binary.LittleEndian.PutUint64(b8[:], uint64(next()))
				v = b8[:]
			case tBool:
				v = []byte{byte(next())}
			case tTimestamp:
				binary.LittleEndian.PutUint32(b8[4:], uint32(next()))
				binary.LittleEndian.PutUint32(b8[:], uint32(next()))
				v = b8[:]
			case tDecimal128:
				t.Fatal("decimal128 metric: not rebuilt by this test")
			}
			out = append(append(append(append(out, typ), e.key...), 0), v...)
		}
		out = append(out, 0)
		binary.LittleEndian.PutUint32(out[at:], uint32(len(out)-at))
		return out
	}
	return build(nil, c.Ref)
}

// payloads returns the uncompressed data of every chunk of an FTDC stream.
func payloads(t testing.TB, data []byte) [][]byte {
	var out [][]byte
	var d decoder
	for at := 0; at+4 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[at:]))
		if n < 5 || at+n > len(data) {
			break
		}
		top, err := readTop(data[at : at+n])
		at += n
		if err != nil || top.typ != TypeMetricChunk {
			continue
		}
		raw, err := d.inflate(top.data[4:], int(binary.LittleEndian.Uint32(top.data)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(raw))
	}
	return out
}

// The Writer, given the samples of a real file one by one, cuts the same
// chunks as mongod did and encodes them to the same bytes before zlib.
func TestWriterChunksAsMongodDid(t *testing.T) {
	// 3.2, 4.4, the 8.0 sharded layout and an 8.0 replica set member: the
	// 3.4, 7.0 and 8.2 files agree too, more slowly.
	for _, i := range []int{1, 9, 14, 16} {
		f := corpus[i]
		t.Run(f.path[:6], func(t *testing.T) {
			orig := readAll(t, "testdata/"+f.path).chunks
			var buf bytes.Buffer
			w := NewWriter(&buf)
			for _, c := range orig {
				for s := 0; s < c.Samples; s++ {
					// The reference keeps its fractions; the others have only
					// what FTDC kept of them.
					at, doc := time.UnixMilli(c.Times[s]), []byte(c.Ref)
					if s == 0 {
						at = c.ID
					} else {
						doc = sampleDoc(t, c, s)
					}
					if err := w.Add(at, doc); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := payloads(t, readFile(t, "testdata/"+f.path))
			got := payloads(t, buf.Bytes())
			if len(got) != len(want) {
				t.Fatalf("%d chunks written, mongod wrote %d", len(got), len(want))
			}
			for k := range got {
				if !bytes.Equal(got[k], want[k]) {
					t.Fatalf("chunk %d (%s): %d bytes written differ from mongod's %d", k, orig[k].ID, len(got[k]), len(want[k]))
				}
			}
		})
	}
}
