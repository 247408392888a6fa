package ftdcedit

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
)

const file406 = "../ftdc/testdata/4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000"

// read returns a file's metadata and every sample's value of the metrics
// named.
func read(t *testing.T, path string, names ...string) (*ftdc.Metadata, map[string][]int64) {
	t.Helper()
	r, err := ftdc.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var meta *ftdc.Metadata
	out := map[string][]int64{}
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return meta, out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch v := it.(type) {
		case *ftdc.Metadata:
			if meta == nil {
				c := *v
				c.Doc = append(bson.Raw(nil), v.Doc...)
				meta = &c
			}
		case *ftdc.Chunk:
			for _, n := range names {
				out[n] = append(out[n], v.Lookup(n)...)
			}
		case ftdc.Skip:
			t.Fatalf("skipped %s", v)
		}
	}
}

// TestCopyKeepsWhatItDoesNotChange copies a real 4.0 file's samples from
// its second minute on as another process with a cache of 3 GB and 10
// queries a second more: the other metrics are the file's, sample for
// sample.
func TestCopyKeepsWhatItDoesNotChange(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "metrics.copy")
	n, err := Copy(file406, dst, Options{From: time.Minute, PID: 42, Metadata: CacheSizeGB(3),
		Sample: Queries(func(time.Duration) (int64, int64) { return 10, 100 }, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"serverStatus.opcounters.query", "serverStatus.opcounters.insert", "serverStatus.pid", "serverStatus.uptimeMillis",
		"serverStatus.opLatencies.reads.latency"}
	_, src := read(t, file406, names...)
	meta, got := read(t, dst, names...)
	skip := len(src[names[0]]) - n
	if n < 200 || skip < 55 || skip > 65 {
		t.Fatalf("copied %d of %d samples, want those after the first minute", n, len(src[names[0]]))
	}
	for i := 0; i < n; i++ {
		s := skip + i
		if got["serverStatus.opcounters.insert"][i] != src["serverStatus.opcounters.insert"][s] || got["serverStatus.pid"][i] != 42 {
			t.Fatalf("sample %d: inserts %d (want %d), pid %d", i, got["serverStatus.opcounters.insert"][i], src["serverStatus.opcounters.insert"][s], got["serverStatus.pid"][i])
		}
		planted := got["serverStatus.opcounters.query"][i] - src["serverStatus.opcounters.query"][s]
		if i > 0 && (planted < int64(i)*10-20 || planted > int64(i)*10+20) {
			t.Errorf("sample %d: %d queries planted, want about %d", i, planted, i*10)
		}
		if lat := got["serverStatus.opLatencies.reads.latency"][i] - src["serverStatus.opLatencies.reads.latency"][s]; lat != planted*100 {
			t.Errorf("sample %d: %d µs planted, want %d", i, lat, planted*100)
		}
	}
	if got["serverStatus.uptimeMillis"][0] != 0 {
		t.Errorf("uptime at the first sample %d, want 0 (a process of its own)", got["serverStatus.uptimeMillis"][0])
	}
	gb, err := meta.Doc.LookupErr("getCmdLineOpts", "parsed", "storage", "wiredTiger", "engineConfig", "cacheSizeGB")
	if err != nil || gb.Double() != 3 {
		t.Errorf("cacheSizeGB in the metadata: %v (%v)", gb, err)
	}
}
