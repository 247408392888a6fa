package engine

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/workload"
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

// The fixture is minimongod's own serverStatus, recorded from a run: it
// checks FlattenNumbers on every kind of field minimongod reports, not on
// what a real mongod's document holds.
func TestFlattenNumbersOnMinimongodServerStatus(t *testing.T) {
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
		"wiredTiger.thread-yield.application thread time evicting (usecs)": 0,
	}
	after := map[string]float64{
		CacheMetric("pages read into cache"): 1300, CacheMetric("bytes read into cache"): 5e6,
		CacheMetric("unmodified pages evicted"): 50, CacheMetric("maximum bytes configured"): 268435456,
		"opcounters.query": 2010, "wiredTiger.thread-yield.application thread time evicting (usecs)": 700,
	}
	pt := &peakTracker{metrics: []string{CacheMetric("bytes currently in the cache")}, peak: map[string]float64{}}
	pt.observe(map[string]float64{CacheMetric("bytes currently in the cache"): 7e6})
	pt.observe(map[string]float64{CacheMetric("bytes currently in the cache"): 3e6})
	res := workload.Result{Ops: map[string]workload.OpStats{"read": {Count: 2000}}, Total: workload.OpStats{Count: 2000}}
	d := serverDeltas(before, after, pt, res)
	if v(d.PagesRead) != 1200 || v(d.BytesRead) != 4e6 || v(d.EvictedUnmodified) != 45 || v(d.CacheUsedPeak) != 7e6 || v(d.CacheMax) != 268435456 {
		t.Errorf("deltas = %+v", d)
	}
	if perOp := record.MeasuresOf(record.StepRecord{Server: d, Result: res}).PagesReadPerOp; d.Opcounters["query"] != 2000 || perOp == nil || *perOp != 0.6 {
		t.Errorf("opcounters %v, pages read/op %v", d.Opcounters, perOp)
	}
	if d.AppEvictMicros == nil || *d.AppEvictMicros != 700 {
		t.Errorf("app-thread eviction time = %v", d.AppEvictMicros)
	}
	// Metrics the server did not report in both samples are not measured:
	// nil, never 0.
	if d.EvictedModified != nil || d.AppThreadEvicted != nil || d.DirtyPeak != nil {
		t.Errorf("unreported metrics read as measured: modified %v, app-thread %v, dirty peak %v", d.EvictedModified, d.AppThreadEvicted, d.DirtyPeak)
	}
	if _, ok := d.Opcounters["insert"]; ok {
		t.Errorf("opcounters.insert was not reported but reads %v", d.Opcounters["insert"])
	}
}

func TestServerDeltasWithoutWiredTiger(t *testing.T) {
	before := map[string]float64{"opcounters.query": 10, "connections.current": 3}
	after := map[string]float64{"opcounters.query": 510, "connections.current": 3}
	pt := &peakTracker{metrics: []string{CacheMetric("bytes currently in the cache")}, peak: map[string]float64{}}
	pt.observe(after)
	d := serverDeltas(before, after, pt, workload.Result{Ops: map[string]workload.OpStats{"read": {Count: 500}}})
	if d.PagesRead != nil || d.CacheUsedPeak != nil || d.CacheMax != nil || d.AppEvictMicros != nil || len(d.PerOp) != 0 {
		t.Errorf("a server without WiredTiger statistics got cache figures: %+v", d)
	}
	if d.Opcounters["query"] != 500 {
		t.Errorf("opcounters = %v", d.Opcounters)
	}
	js, _ := json.Marshal(d)
	for _, want := range []string{`"pages_read":null`, `"cache_used_peak":null`, `"app_thread_evict_micros":null`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("record lacks %s: %s", want, js)
		}
	}
}

func v(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
