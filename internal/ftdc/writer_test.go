package ftdc

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// testSample returns sample i of a series whose schema changes at 400 (a
// field is added) and 650 (a number becomes a boolean), and whose "n"
// turns from int32 into a double at 500 (not a schema change for FTDC),
// with the metric names and values a reader must find.
func testSample(i int) (bson.D, []string, []int64) {
	at := time.UnixMilli(1_700_000_000_000 + int64(i)*1000).UTC()
	var n any = int32(i * 3)
	nv := int64(i * 3)
	if i >= 500 {
		n = float64(i)*3 + 0.75
	}
	big := int64(math.MaxInt64 - 2 + int64(i%5)) // wraps around: deltas past int64
	d := bson.D{
		{Key: "start", Value: bson.NewDateTimeFromTime(at)},
		{Key: "serverStatus", Value: bson.D{
			{Key: "start", Value: bson.NewDateTimeFromTime(at)},
			{Key: "host", Value: "h1"},
			{Key: "n", Value: n},
			{Key: "neg", Value: int64(-i)},
			{Key: "big", Value: big},
			{Key: "ok", Value: i%7 == 0},
			{Key: "ts", Value: bson.Timestamp{T: uint32(1_700_000_000 + i), I: uint32(i % 3)}},
			{Key: "arr", Value: bson.A{int32(i), "x", bson.D{{Key: "v", Value: int64(2 * i)}}}},
			{Key: "frac", Value: -2.5},
		}},
	}
	names := []string{"start", "serverStatus.start", "serverStatus.n", "serverStatus.neg", "serverStatus.big", "serverStatus.ok", "serverStatus.ts", "serverStatus.ts.inc", "serverStatus.arr.0", "serverStatus.arr.2.v", "serverStatus.frac"}
	ok := int64(0)
	if i%7 == 0 {
		ok = 1
	}
	ms := at.UnixMilli()
	values := []int64{ms, ms, nv, int64(-i), big, ok, int64(1_700_000_000 + i), int64(i % 3), int64(i), int64(2 * i), -2}
	if i >= 500 {
		values[2] = int64(float64(i)*3 + 0.75)
	}
	if i >= 400 {
		d = append(d, bson.E{Key: "extra", Value: bson.D{{Key: "e", Value: int32(1)}}})
		names = append(names, "extra.e")
		values = append(values, 1)
	}
	if i >= 650 {
		d[1].Value.(bson.D)[3].Value = i%2 == 0
		values[3] = int64(1 - i%2)
	}
	return d, names, values
}

func writeTestSeries(t *testing.T, w *Writer, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		d, _, _ := testSample(i)
		raw := mustMarshal(t, d)
		at := time.UnixMilli(1_700_000_000_000 + int64(i)*1000)
		var err error
		if i%2 == 0 {
			err = w.Add(at, bson.Raw(raw))
		} else {
			err = w.Add(at, d)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkSeries checks that the chunks hold samples from..to of testSample.
func checkSeries(t *testing.T, chunks []*Chunk, from, to int) {
	t.Helper()
	i := from
	for _, c := range chunks {
		for s := 0; s < c.Samples; s++ {
			_, names, values := testSample(i)
			if !slices.Equal(c.Names, names) {
				t.Fatalf("sample %d: names %v, want %v", i, c.Names, names)
			}
			for m := range names {
				if got := c.Metric(m)[s]; got != values[m] {
					t.Fatalf("sample %d: %s = %d, want %d", i, names[m], got, values[m])
				}
			}
			if c.Times[s] != 1_700_000_000_000+int64(i)*1000 {
				t.Fatalf("sample %d: time %d", i, c.Times[s])
			}
			i++
		}
	}
	if i != to {
		t.Fatalf("read samples %d..%d, want to %d", from, i, to)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.2023-11-14T22-13-20Z-00000")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f)
	if err := w.WriteMetadata(time.UnixMilli(1_700_000_000_000), bson.D{{Key: "buildInfo", Value: bson.D{{Key: "version", Value: "8.0.0"}}}}); err != nil {
		t.Fatal(err)
	}
	writeTestSeries(t, w, 0, 1000)
	if w.Pending() != 50 {
		t.Errorf("pending %d samples, want 50", w.Pending())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := readAll(t, path)
	var sizes []int
	for _, c := range s.chunks {
		sizes = append(sizes, c.Samples)
	}
	// Full at 300; the schema changes at 400 and 650; the rest is flushed.
	if want := []int{300, 100, 250, 300, 50}; !slices.Equal(sizes, want) {
		t.Fatalf("chunks of %v samples, want %v", sizes, want)
	}
	if len(s.meta) != 1 || s.meta[0].Section("buildInfo") == nil || len(s.skips) != 0 {
		t.Fatalf("metadata %v, skips %v", s.meta, s.skips)
	}
	checkSeries(t, s.chunks, 0, 1000)
	if !s.chunks[0].ID.Equal(time.UnixMilli(1_700_000_000_000)) || !s.chunks[1].ID.Equal(time.UnixMilli(1_700_000_300_000)) {
		t.Errorf("chunk _ids %s, %s: want their first samples' times", s.chunks[0].ID, s.chunks[1].ID)
	}
}

func TestWriterSamplesPerChunk(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.SetSamplesPerChunk(1); err == nil {
		t.Error("samples per chunk 1 accepted")
	}
	if err := w.SetSamplesPerChunk(7); err != nil {
		t.Fatal(err)
	}
	writeTestSeries(t, w, 0, 20)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m")
	writeFile(t, path, buf.Bytes())
	s := readAll(t, path)
	if len(s.chunks) != 3 || s.chunks[0].Samples != 7 || s.chunks[2].Samples != 6 {
		t.Fatalf("%d chunks", len(s.chunks))
	}
	checkSeries(t, s.chunks, 0, 20)
}

func TestWriterInterimFile(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "metrics.2023-11-14T22-13-20Z-00000")
	interim := filepath.Join(dir, "metrics.interim")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := NewWriter(f)
	if err := w.WriteInterimFile(interim); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(interim); err != nil || fi.Size() != 0 {
		t.Fatalf("interim with nothing pending: %v, %v", fi, err)
	}
	writeTestSeries(t, w, 0, 10)
	if err := w.WriteInterimFile(interim); err != nil {
		t.Fatal(err)
	}
	s := readAll(t, interim)
	if len(s.chunks) != 1 || s.chunks[0].Samples != 10 {
		t.Fatalf("interim: %d chunks", len(s.chunks))
	}
	checkSeries(t, s.chunks, 0, 10)
	writeTestSeries(t, w, 10, 310) // the first chunk fills at 300
	if err := w.WriteInterimFile(interim); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(interim + ".temp"); !os.IsNotExist(err) {
		t.Errorf("interim temp file left: %v", err)
	}
	checkSeries(t, readAll(t, interim).chunks, 300, 310)
	checkSeries(t, readAll(t, archive).chunks, 0, 300)
	// The directory reads the archive, then the interim.
	checkSeries(t, readAll(t, dir).chunks, 0, 310)
}

func TestWriterMetadataDelta(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, doc := range []bson.D{{{Key: "getParameter", Value: bson.D{{Key: "a", Value: int32(1)}}}}, {{Key: "getParameter", Value: bson.D{{Key: "a", Value: int32(2)}}}}} {
		if err := w.WriteMetadataDelta(time.UnixMilli(int64(i)), int64(i), doc); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(&buf, "b")
	var counts []int64
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		m, ok := it.(*Metadata)
		if !ok || m.Type != TypeMetadataDelta {
			t.Fatalf("read %#v", it)
		}
		counts = append(counts, m.Count)
	}
	if !slices.Equal(counts, []int64{0, 1}) {
		t.Errorf("counts %v", counts)
	}
}

func TestWriterRejectsWhatIsNotADocument(t *testing.T) {
	w := NewWriter(io.Discard)
	if err := w.Add(time.Now(), bson.Raw{1, 2, 3}); err == nil {
		t.Error("3 bytes accepted as a sample")
	}
	if err := w.Add(time.Now(), 5); err == nil {
		t.Error("5 accepted as a sample")
	}
}
