package engine

import (
	"os"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// loadStatus reads a serverStatus fixture (canonical extended JSON).
func loadStatus(t *testing.T, name string) bson.Raw {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var raw bson.Raw
	if err := bson.UnmarshalExtJSON(b, true, &raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestFlattenNumbersOnARealServerStatus(t *testing.T) {
	m := FlattenNumbers(loadStatus(t, "serverstatus-minimongod.json"))
	for key, want := range map[string]float64{
		"wiredTiger.cache.maximum bytes configured": 268435456,
		"pid":                      18390,
		"localTime":                1796115727643, // dates as Unix ms
		"storageEngine.persistent": 1,             // booleans as 0/1
		"opcounters.insert":        0,
	} {
		if got, ok := m[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	for _, absent := range []string{"host", "version", "wiredTiger.uri", "storageEngine.name"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%s is not a number but was flattened", absent)
		}
	}
	if len(m) < 400 {
		t.Errorf("%d numeric fields, want every one of the ~460 serverStatus numbers", len(m))
	}
}

func TestServerDeltas(t *testing.T) {
	before := map[string]float64{
		CacheMetric("pages read into cache"): 100, CacheMetric("bytes read into cache"): 1e6,
		CacheMetric("unmodified pages evicted"): 5, "opcounters.query": 10,
	}
	after := map[string]float64{
		CacheMetric("pages read into cache"): 1300, CacheMetric("bytes read into cache"): 5e6,
		CacheMetric("unmodified pages evicted"): 50, CacheMetric("maximum bytes configured"): 268435456,
		"opcounters.query": 2010, "wiredTiger.thread-yield.application thread time evicting (usecs)": 700,
	}
	pt := &peakTracker{metrics: []string{CacheMetric("bytes currently in the cache")}, peak: map[string]float64{}}
	pt.observe(map[string]float64{CacheMetric("bytes currently in the cache"): 7e6})
	pt.observe(map[string]float64{CacheMetric("bytes currently in the cache"): 3e6})
	d := serverDeltas(before, after, pt, WorkloadResult{Ops: map[string]OpStats{"read": {Count: 2000}}})
	if d.PagesRead != 1200 || d.BytesRead != 4e6 || d.EvictedUnmodified != 45 || d.CacheUsedPeak != 7e6 || d.CacheMax != 268435456 {
		t.Errorf("deltas = %+v", d)
	}
	if d.Opcounters["query"] != 2000 || d.PerOp["pages_read_per_read"] != 0.6 {
		t.Errorf("opcounters %v, per op %v", d.Opcounters, d.PerOp)
	}
	if d.AppEvictMicros == nil || *d.AppEvictMicros != 700 {
		t.Errorf("app-thread eviction time = %v", d.AppEvictMicros)
	}
}

func TestVerdict(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name string
		p    Provenance
		d    ServerDeltas
		want string
	}{
		{"memory bandwidth", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib, ApparentMBps: 9 * 1024}, ServerDeltas{PagesRead: 10}, "hot"},
		{"no pages read", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib}, ServerDeltas{}, "hot"},
		{"dropped on bare metal", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib, Dropped: true, DropTried: true}, ServerDeltas{PagesRead: 10}, "cold"},
		{"dropped in a VM", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib, Dropped: true, DropTried: true, Virtualization: "kvm"}, ServerDeltas{PagesRead: 10}, "unknown"},
		{"bigger than memory", Provenance{StorageBytes: 16 * gib, MemoryBytes: 8 * gib}, ServerDeltas{PagesRead: 10}, "cold"},
		{"drop refused", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib, DropTried: true, DropReason: "drop_caches needs root"}, ServerDeltas{PagesRead: 10}, "hot"},
		{"not dropped", Provenance{StorageBytes: gib, MemoryBytes: 8 * gib}, ServerDeltas{PagesRead: 10}, "hot"},
	} {
		got, reason := verdict(&tc.p, &tc.d)
		if got != tc.want || reason == "" {
			t.Errorf("%s: verdict %s (%s), want %s", tc.name, got, reason, tc.want)
		}
	}
}
