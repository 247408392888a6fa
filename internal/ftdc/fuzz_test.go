package ftdc

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// firstChunks returns, per real file, its bytes up to the end of its first
// metric chunk.
func firstChunks(t testing.TB) [][]byte {
	var out [][]byte
	for _, f := range corpus {
		data := readFile(t, "testdata/"+f.path)
		for at := 0; at+4 <= len(data); {
			n := int(binary.LittleEndian.Uint32(data[at:]))
			if n < 5 || at+n > len(data) {
				break
			}
			t, _ := readTop(data[at : at+n])
			at += n
			if t.typ == TypeMetricChunk {
				out = append(out, data[:at])
				break
			}
		}
	}
	return out
}

// drain reads everything r gives, checking each chunk, up to a bound.
func drain(t *testing.T, r *Reader) {
	for n := 0; n < 100_000; n++ {
		it, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := it.(type) {
		case *Chunk:
			checkChunk(t, v)
			_ = v.Lookup("serverStatus.start")
		case *Metadata:
			_ = v.Section("buildInfo")
		}
	}
	t.Fatal("the reader did not end")
}

func FuzzReader(f *testing.F) {
	for _, b := range firstChunks(f) {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{5, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz")
		r.SetMaxChunkValues(1 << 20)
		drain(t, r)
	})
}

// FuzzChunk fuzzes what zlib holds in a chunk (the reference document, the
// counts and the deltas), which FuzzReader rarely reaches past the checksum.
func FuzzChunk(f *testing.F) {
	for _, b := range firstChunks(f) {
		var d decoder
		var last []byte
		for at := 0; at+4 <= len(b); {
			n := int(binary.LittleEndian.Uint32(b[at:]))
			last = b[at : at+n]
			at += n
		}
		top, _ := readTop(last)
		raw, err := d.inflate(top.data[4:], int(binary.LittleEndian.Uint32(top.data)))
		if err != nil {
			f.Fatal(err)
		}
		if len(raw) < 20000 {
			f.Add(bytes.Clone(raw))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var d decoder
		d.maxValues = 1 << 20
		var c Chunk
		if err := d.decode(&c, zlibChunk(raw)); err == nil {
			checkChunk(t, &c)
		}
	})
}
