package ftdc

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// BenchmarkDecode reads the 7.0 file (2,323 metrics x 19,007 samples) from
// memory and reports the metric values decoded per second.
func BenchmarkDecode(b *testing.B) {
	data := readFile(b, "testdata/"+corpus[11].path)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var values int
	start := time.Now()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), "7.0")
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if c, ok := it.(*Chunk); ok {
				values += len(c.Values)
			}
		}
	}
	b.ReportMetric(float64(values)/time.Since(start).Seconds(), "values/s")
}

// TestDecodeSpeed holds the reader to 20 million values a second on one
// core, with a margin for a loaded machine: at least a third of that here.
func TestDecodeSpeed(t *testing.T) {
	r := testing.Benchmark(BenchmarkDecode)
	v := r.Extra["values/s"]
	t.Logf("%.1f M values/s, %d allocs, %d B per read of the file", v/1e6, r.AllocsPerOp(), r.AllocedBytesPerOp())
	if v < 20e6/3 {
		t.Errorf("%.1f M values/s, want at least 20 M (a third of it under load)", v/1e6)
	}
}

// BenchmarkWriterAdd adds the samples of an 8.0 replica set member (5,558
// metrics) to a Writer, one a second as mongod takes them.
func BenchmarkWriterAdd(b *testing.B) {
	c := readAll(b, "testdata/"+corpus[16].path).chunks[0]
	docs := make([][]byte, c.Samples)
	for s := range docs {
		docs[s] = sampleDoc(b, c, s)
	}
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	at := c.ID
	s := 0
	for b.Loop() {
		if err := w.Add(at, docs[s%len(docs)]); err != nil {
			b.Fatal(err)
		}
		s++
		at = at.Add(time.Second)
	}
}
