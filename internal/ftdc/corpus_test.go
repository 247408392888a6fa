package ftdc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// corpusFile is a row of testdata/SOURCES.md.
type corpusFile struct {
	path        string
	meta, delta int   // type-0 and type-2 documents
	chunks      int   // type-1 documents read
	metrics     []int // distinct metricsCount values, sorted
	samples     int
	first, last string // times of the first and last samples, UTC
	skips       int
}

var corpus = []corpusFile{
	{"3.2.6/ASTPMeetup+HemiNotes_3.2.01--metrics.2017-03-05T20-37-30Z-00000", 1, 0, 4, []int{596, 598}, 1190, "2017-03-05 20:37:30", "2017-03-05 20:57:19", 1},
	{"3.2.10/Antystenes+tas2016--metrics.2016-11-21T11-33-59Z-00000", 1, 0, 20, []int{620}, 6000, "2016-11-21 11:33:59", "2016-11-21 16:30:19", 0},
	{"3.2.17/cocheok+mongo-sync-master-slave--metrics.2017-10-12T18-23-58Z-00000", 1, 0, 2, []int{739, 740}, 187, "2017-10-12 18:23:59", "2017-10-12 18:27:05", 0},
	{"3.4.1/CodingGuruInTraining+WebLab10--metrics.interim", 0, 0, 1, []int{746}, 121, "2017-03-31 02:05:09", "2017-03-31 02:07:09", 0},
	{"3.4.9/Cloudxtreme+bookinventory--metrics.2017-11-23T03-27-45Z-00000", 1, 0, 51, []int{702, 703}, 15075, "2017-11-23 03:27:45", "2017-11-23 09:32:38", 0},
	{"3.6.3/caracalApp+backend--metrics.2019-01-18T08-16-12Z-00000", 1, 0, 15, []int{877, 879, 880}, 4260, "2019-01-18 08:16:13", "2019-01-18 09:27:12", 0},
	{"4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000", 1, 0, 3, []int{1173, 1398, 1407}, 307, "2019-03-15 19:37:17", "2019-03-15 19:42:23", 0},
	{"4.0.8/RicardoIngles+SIT323-task-9_1p--metrics.2023-05-15T11-19-08Z-00000", 1, 0, 11, []int{1166, 1168}, 3060, "2023-05-15 11:19:09", "2023-05-15 12:10:08", 0},
	{"4.4.2/karthi9792+mongodb--metrics.2021-01-15T06-23-00Z-00000", 1, 0, 20, []int{715, 716, 717}, 5313, "2021-01-15 06:23:00", "2021-01-15 07:51:32", 0},
	{"4.4.10/11xnt+Web-App-Dev-2-API-Labs-2021--metrics.2021-12-04T17-17-08Z-00000", 1, 0, 14, []int{1260}, 4019, "2021-12-04 17:17:08", "2021-12-04 18:24:24", 0},
	{"5.0.7/faisallarai+meou-manisfests--metrics.2022-04-19T23-27-34Z-00000", 1, 0, 13, []int{1823, 1824, 1831, 2132}, 2613, "2022-04-19 23:16:52", "2022-04-20 00:08:17", 0},
	{"7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000", 1, 0, 65, []int{2323, 2326}, 19007, "2024-04-16 11:34:43", "2024-04-16 16:51:29", 0},
	{"7.0.0-rc6/b1ron+ftdc--metrics.2025-07-10T15-58-48Z-00000", 1, 0, 84, []int{2347, 2348, 2349, 2352, 2355, 2358}, 17715, "2025-07-10 15:58:49", "2025-07-10 20:23:20", 0},
	{"7.0.12/Kschellens+Cours_NoSQL--metrics.2024-07-16T07-41-04Z-00000", 1, 0, 14, []int{376, 2023, 2088, 2389, 2399, 2408, 2409, 2425}, 1825, "2024-07-16 07:41:04", "2024-07-16 08:11:36", 0},
	{"8.0.8/gadu04+MongoDB-Sharding--metrics.2025-04-22T08-13-01Z-00000", 1, 3, 19, []int{3217, 5270, 5271, 5273, 5274, 5283, 5287, 5288, 5289, 5290, 5292, 5293, 5296, 5297}, 2111, "2025-04-22 08:13:02", "2025-04-22 08:48:12", 0},
	{"8.0.8/gadu04+MongoDB-Sharding--metrics.2025-04-22T08-22-42Z-00000", 1, 2, 14, []int{1931, 1934, 1937, 1938, 1940, 1942, 1943, 1945}, 1501, "2025-04-22 08:22:43", "2025-04-22 08:47:43", 0},
	{"8.0.15/PHieu160105+mongodb_replica--metrics.interim", 0, 0, 1, []int{5558}, 101, "2025-11-10 05:15:13", "2025-11-10 05:16:53", 0},
	{"8.2.6/Vj-Jadhav+devops-day8--metrics.2026-04-13T12-53-52Z-00000", 1, 1, 21, []int{3592, 3594}, 6152, "2026-04-13 12:53:52", "2026-04-13 16:43:35", 0},
}

// readAll reads path to the end and returns what it saw.
type seen struct {
	chunks  []*Chunk
	meta    []*Metadata
	skips   []Skip
	samples int
}

func readAll(t testing.TB, path string) seen {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s seen
	for {
		it, err := r.Next()
		if err == io.EOF {
			return s
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := it.(type) {
		case *Chunk:
			checkChunk(t, v)
			s.chunks = append(s.chunks, v.Clone())
			s.samples += v.Samples
		case *Metadata:
			s.meta = append(s.meta, v)
		case Skip:
			s.skips = append(s.skips, v)
		}
	}
}

// checkChunk checks what holds for every chunk the Reader returns.
func checkChunk(t testing.TB, c *Chunk) {
	t.Helper()
	if len(c.Names) != len(c.Paths) || len(c.Values) != len(c.Names)*c.Samples || len(c.Times) != c.Samples || c.Samples < 1 {
		t.Fatalf("chunk %s: %d names, %d paths, %d values, %d times, %d samples", c.ID, len(c.Names), len(c.Paths), len(c.Values), len(c.Times), c.Samples)
	}
}

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCorpusFilesDecode(t *testing.T) {
	for _, f := range corpus {
		t.Run(strings.SplitN(f.path, "/", 2)[0], func(t *testing.T) {
			s := readAll(t, "testdata/"+f.path)
			var meta, delta int
			for _, m := range s.meta {
				if m.Type == TypeMetadata {
					meta++
				} else {
					delta++
				}
			}
			if meta != f.meta || delta != f.delta {
				t.Errorf("%d type-0 and %d type-2 documents, want %d and %d", meta, delta, f.meta, f.delta)
			}
			if len(s.chunks) != f.chunks || s.samples != f.samples {
				t.Errorf("%d chunks of %d samples, want %d of %d", len(s.chunks), s.samples, f.chunks, f.samples)
			}
			var counts []int
			for _, c := range s.chunks {
				if !slices.Contains(counts, len(c.Names)) {
					counts = append(counts, len(c.Names))
				}
			}
			slices.Sort(counts)
			if !slices.Equal(counts, f.metrics) {
				t.Errorf("metricsCount values %v, want %v", counts, f.metrics)
			}
			if len(s.skips) != f.skips {
				t.Errorf("skips %v, want %d", s.skips, f.skips)
			}
			if len(s.chunks) == 0 {
				return
			}
			first := s.chunks[0].Time(0).Truncate(time.Second)
			lc := s.chunks[len(s.chunks)-1]
			last := lc.Time(lc.Samples - 1).Truncate(time.Second)
			if !first.Equal(utc(t, f.first)) || !last.Equal(utc(t, f.last)) {
				t.Errorf("span %s -> %s, want %s -> %s", first, last, f.first, f.last)
			}
			for _, c := range s.chunks {
				if c.TimeSource != "serverStatus.start" {
					t.Errorf("chunk %s: times from %q, want serverStatus.start", c.ID, c.TimeSource)
				}
			}
		})
	}
}

func TestTruncatedFileGivesItsWholeChunksAndASkip(t *testing.T) {
	f := corpus[0]
	s := readAll(t, "testdata/"+f.path)
	if len(s.chunks) != 4 || len(s.skips) != 1 {
		t.Fatalf("%d chunks and skips %v, want 4 and one", len(s.chunks), s.skips)
	}
	k := s.skips[0]
	if k.File != "testdata/"+f.path || k.Offset != 27037 || k.Length != 32768-27037 || !strings.Contains(k.Reason, "truncated") {
		t.Errorf("skip %+v, want the 5731 bytes from 27037 as truncated", k)
	}
}

func TestRewrittenInterimChunkGoesBackInTime(t *testing.T) {
	s := readAll(t, "testdata/"+corpus[10].path)
	if len(s.meta) != 1 || len(s.chunks) != 13 {
		t.Fatalf("%d metadata, %d chunks", len(s.meta), len(s.chunks))
	}
	c0, c1 := s.chunks[0], s.chunks[1]
	if !c0.ID.Before(s.meta[0].ID) || !c0.ID.Equal(utc(t, "2022-04-19 23:16:52")) {
		t.Errorf("first chunk %s, metadata %s: want the chunk of the process before, earlier", c0.ID, s.meta[0].ID)
	}
	if c1.ID.Before(s.meta[0].ID) {
		t.Errorf("second chunk %s before the metadata %s", c1.ID, s.meta[0].ID)
	}
	// The process restarted between the two: its uptime starts again.
	u0, u1 := c0.Lookup("serverStatus.uptimeMillis"), c1.Lookup("serverStatus.uptimeMillis")
	if len(u0) != 171 || len(u1) == 0 || u0[170] != 185266 || u1[0] != 5253 {
		t.Errorf("serverStatus.uptimeMillis ends at %v, starts again at %v; want 185266 after 171 samples, then 5253", u0[len(u0)-1:], u1[:1])
	}
}

func TestInvalidUTF8ChunkIsRead(t *testing.T) {
	s := readAll(t, "testdata/"+corpus[13].path)
	at := utc(t, "2024-07-16 08:11:23")
	for _, c := range s.chunks {
		if c.ID.Truncate(time.Second).Equal(at) {
			if utf8.Valid(c.Ref) {
				t.Errorf("chunk %s: reference document is valid UTF-8; the test data changed", c.ID)
			}
			if c.Samples < 2 {
				t.Errorf("chunk %s: %d samples", c.ID, c.Samples)
			}
			return
		}
	}
	t.Fatalf("no chunk at %s among %d", at, len(s.chunks))
}

func TestMetadataDeltasAndRoleLayout(t *testing.T) {
	s := readAll(t, "testdata/"+corpus[14].path)
	var counts []int64
	for _, m := range s.meta {
		if m.Type == TypeMetadataDelta {
			counts = append(counts, m.Count)
		}
	}
	if !slices.Equal(counts, []int64{0, 1, 2}) {
		t.Errorf("type-2 counts %v, want [0 1 2]", counts)
	}
	m0 := s.meta[0]
	if m0.Type != TypeMetadata {
		t.Fatalf("first metadata has type %d", m0.Type)
	}
	bi := m0.Section("buildInfo")
	if v, err := bi.LookupErr("version"); err != nil || v.StringValue() != "8.0.8" {
		t.Errorf("buildInfo under common: version %v, %v", v, err)
	}
	if m0.Section("getCmdLineOpts") == nil || m0.Section("nothing") != nil {
		t.Error("Section: getCmdLineOpts missing or nothing found")
	}
	c := s.chunks[1]
	for _, name := range []string{"serverStatus.uptime", "replSetGetStatus.myState", "systemMetrics.cpu.user_ms", "connPoolStats.totalInUse", "common.start", "start"} {
		if c.Index(name) < 0 {
			t.Errorf("no metric %q in the role layout", name)
		}
	}
	m := c.Index("serverStatus.uptime")
	if c.Paths[m] != "common.serverStatus.uptime" {
		t.Errorf("path of serverStatus.uptime is %q", c.Paths[m])
	}
	if c.TimeSource != "serverStatus.start" {
		t.Errorf("times from %q", c.TimeSource)
	}
	// The flat layout names the same metric the same way.
	flat := readAll(t, "testdata/"+corpus[16].path).chunks[0]
	if flat.Index("serverStatus.uptime") < 0 || flat.Index("replSetGetStatus.myState") < 0 {
		t.Error("8.0 flat layout lacks serverStatus.uptime or replSetGetStatus.myState")
	}
}

func TestTimestampsCountTwice(t *testing.T) {
	c := readAll(t, "testdata/"+corpus[16].path).chunks[0]
	i := slices.IndexFunc(c.Names, func(n string) bool { return strings.HasSuffix(n, ".inc") })
	if i < 1 || c.Names[i] != c.Names[i-1]+".inc" {
		t.Fatalf("no timestamp pair among %d names", len(c.Names))
	}
	if s := c.Metric(i - 1)[0]; s < 1.7e9 || s > 1.8e9 {
		t.Errorf("%s = %d, want seconds of 2025", c.Names[i-1], s)
	}
}

func TestSameSchemaSharesNames(t *testing.T) {
	s := readAll(t, "testdata/"+corpus[1].path)
	for _, c := range s.chunks[1:] {
		if &c.Names[0] != &s.chunks[0].Names[0] {
			t.Fatalf("chunk %s has its own names for the same schema", c.ID)
		}
	}
}

func TestDirectoryReadsFilesInOrderAndReportsTheRest(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/"+corpus[8].path, dir+"/metrics.2021-01-15T06-23-00Z-00000")  // 4.4
	copyFile(t, "testdata/"+corpus[10].path, dir+"/metrics.2022-04-19T23-27-34Z-00000") // 5.0, after an upgrade
	copyFile(t, "testdata/"+corpus[3].path, dir+"/metrics.interim")
	writeFile(t, dir+"/metrics.2022-04-20T01-00-00Z-00000", nil) // 0 bytes
	mo := &strings.Builder{}
	w := NewWriter(mo)
	if err := w.WriteMetadata(utc(t, "2022-04-20 02:00:00"), map[string]any{"buildInfo": map[string]any{"version": "5.0.7"}}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir+"/metrics.2022-04-20T02-00-00Z-00000", []byte(mo.String())) // metadata only
	writeFile(t, dir+"/notes.txt", []byte("hello"))

	s := readAll(t, dir)
	if len(s.chunks) != 20+13+1 || s.samples != 5313+2613+121 {
		t.Errorf("%d chunks, %d samples", len(s.chunks), s.samples)
	}
	if len(s.meta) != 3 {
		t.Errorf("%d metadata documents, want 3", len(s.meta))
	}
	var order []string
	for _, c := range s.chunks {
		if len(order) == 0 || order[len(order)-1] != c.File {
			order = append(order, c.File)
		}
	}
	want := []string{dir + "/metrics.2021-01-15T06-23-00Z-00000", dir + "/metrics.2022-04-19T23-27-34Z-00000", dir + "/metrics.interim"}
	if !slices.Equal(order, want) {
		t.Errorf("files read in order %v, want %v", order, want)
	}
	if len(s.skips) != 1 || s.skips[0].File != dir+"/notes.txt" {
		t.Errorf("skips %v, want notes.txt", s.skips)
	}
}

func TestCorruptInputIsSkippedNotDropped(t *testing.T) {
	good := readFile(t, "testdata/"+corpus[3].path) // one chunk
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"garbage", []byte("not ftdc at all, just text"), "document length"},
		{"three bytes", []byte{1, 2, 3}, "inside a document's length"},
		{"bad zlib", corruptAt(good, len(good)-200), "metric chunk"},
		{"no type", mustMarshal(t, map[string]any{"_id": time.Now()}), "type"},
		{"unknown type", mustMarshal(t, map[string]any{"_id": time.Now(), "type": 7}), "unknown document type 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(string(tc.data)), "x")
			var skips []Skip
			for n := 0; n < 100; n++ {
				it, err := r.Next()
				if err == io.EOF {
					break
				}
				if s, ok := it.(Skip); ok {
					skips = append(skips, s)
				}
			}
			if len(skips) != 1 || !strings.Contains(skips[0].Reason, tc.want) || skips[0].File != "x" {
				t.Fatalf("skips %v, want one saying %q", skips, tc.want)
			}
		})
	}
}

// Every cut of a file gives its whole documents and one Skip for the rest.
func TestEveryTruncationGivesWholeDocumentsAndOneSkip(t *testing.T) {
	data := readFile(t, "testdata/"+corpus[2].path)
	ends := []int{0}
	for at := 0; at+4 <= len(data); {
		at += int(uint32(data[at]) | uint32(data[at+1])<<8 | uint32(data[at+2])<<16 | uint32(data[at+3])<<24)
		ends = append(ends, at)
	}
	for cut := 0; cut <= len(data); cut += 97 {
		whole := 0
		for _, e := range ends[1:] {
			if e <= cut {
				whole++
			}
		}
		r := NewReader(strings.NewReader(string(data[:cut])), "cut")
		docs, skips := 0, 0
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if _, ok := it.(Skip); ok {
				skips++
			} else {
				docs++
			}
		}
		wantSkips := 0
		if !slices.Contains(ends, cut) {
			wantSkips = 1
		}
		if docs != whole || skips != wantSkips {
			t.Fatalf("cut at %d: %d documents, %d skips; want %d, %d", cut, docs, skips, whole, wantSkips)
		}
	}
}

func corruptAt(b []byte, at int) []byte {
	c := slices.Clone(b)
	for i := at; i < at+8 && i < len(c); i++ {
		c[i] ^= 0x5a
	}
	return c
}

func TestDoubleConversion(t *testing.T) {
	nan := 0.0
	nan /= nan
	for _, tc := range []struct {
		f    float64
		want int64
	}{{1.9, 1}, {-1.9, -1}, {nan, 0}, {1e300, 1<<63 - 1}, {-1e300, -1 << 63}, {9.2e18, 9200000000000000000}} {
		if got := doubleToInt64(tc.f); got != tc.want {
			t.Errorf("doubleToInt64(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

func TestDecimalConversion(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int64
	}{{"2.5", 2}, {"3.5", 4}, {"-2.5", -2}, {"12345", 12345}, {"1E+30", 1<<63 - 1}, {"-1E+30", -1 << 63}, {"NaN", 0}, {"1E-90", 0}, {"7E+2", 700}} {
		d := mustDecimal(t, tc.s)
		if got := decimalToInt64(d); got != tc.want {
			t.Errorf("decimalToInt64(%s) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ExampleReader() {
	r, err := Open("testdata/3.4.1/CodingGuruInTraining+WebLab10--metrics.interim")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if c, ok := it.(*Chunk); ok {
			conns := c.Lookup("serverStatus.connections.current")
			fmt.Println(c.Samples, "samples of", len(c.Names), "metrics from", c.Time(0).Format(time.RFC3339), "connections", conns[0])
		}
	}
	// Output: 121 samples of 746 metrics from 2017-03-31T02:05:09Z connections 2
}

func TestChunkWithoutMetricsCannotClaimEndlessSamples(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	at := time.UnixMilli(1_700_000_000_000)
	if err := w.Add(at, bson.D{{Key: "s", Value: "no metrics"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(at, bson.D{{Key: "s", Value: "no metrics"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// Set the delta count inside the zlib stream to 2^32-1.
	r := NewReader(bytes.NewReader(b.Bytes()), "b")
	it, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	c := it.(*Chunk)
	if c.Samples != 2 || len(c.Names) != 0 || c.TimeSource != "_id" || c.Times[1] != at.UnixMilli() {
		t.Fatalf("chunk of %d samples, %d names, times %v from %s", c.Samples, len(c.Names), c.Times, c.TimeSource)
	}
	raw := append(bytes.Clone(c.Ref), 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff)
	var d decoder
	if err := d.decode(&Chunk{}, zlibChunk(raw)); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("4 billion samples without metrics: %v", err)
	}
}

// zlibChunk returns raw as a chunk's data: its length, then zlib.
func zlibChunk(raw []byte) []byte {
	var buf bytes.Buffer
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(raw)))
	buf.Write(n[:])
	zw := zlib.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	return buf.Bytes()
}
