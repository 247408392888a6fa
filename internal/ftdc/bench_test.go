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
