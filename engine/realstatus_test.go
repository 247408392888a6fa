package engine

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/internal/ftdc"
)

// realStatuses are serverStatus documents real mongod servers wrote into
// their diagnostic data (internal/ftdc/testdata), one per version.
var realStatuses = []struct{ version, file string }{
	{"3.2.10", "3.2.10/Antystenes+tas2016--metrics.2016-11-21T11-33-59Z-00000"},
	{"4.0.6", "4.0.6/Im-neko+mongo-replica--metrics.2019-03-15T19-37-17Z-00000"},
	{"4.4.10", "4.4.10/11xnt+Web-App-Dev-2-API-Labs-2021--metrics.2021-12-04T17-17-08Z-00000"},
	{"5.0.7", "5.0.7/faisallarai+meou-manisfests--metrics.2022-04-19T23-27-34Z-00000"},
	{"7.0.12", "7.0.12/Kschellens+Cours_NoSQL--metrics.2024-07-16T07-41-04Z-00000"},
	{"8.0.8", "8.0.8/gadu04+MongoDB-Sharding--metrics.2025-04-22T08-13-01Z-00000"},
	{"8.0.15", "8.0.15/PHieu160105+mongodb_replica--metrics.interim"},
}

// realStatus is a real file's first chunk: its serverStatus (the
// reference document's) and, by wtd's metric names, the values of its
// first and last samples as mongod recorded them.
type realStatus struct {
	doc         bson.Raw
	first, last map[string]float64
}

func loadRealStatus(t *testing.T, file string) realStatus {
	t.Helper()
	r, err := ftdc.Open(filepath.Join("..", "internal", "ftdc", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		item, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no metric chunk", file)
		}
		if err != nil {
			t.Fatal(err)
		}
		c, ok := item.(*ftdc.Chunk)
		if !ok {
			continue
		}
		ref := c.Ref
		var doc bson.Raw
		for _, path := range [][]string{{"serverStatus"}, {"shard", "serverStatus"}, {"common", "serverStatus"}} {
			if v, err := ref.LookupErr(path...); err == nil {
				doc, _ = v.DocumentOK()
				break
			}
		}
		if doc == nil {
			t.Fatalf("%s: no serverStatus in the reference document", file)
		}
		rs := realStatus{doc: doc, first: map[string]float64{}, last: map[string]float64{}}
		for m, name := range c.Names {
			if n, ok := strings.CutPrefix(name, "serverStatus."); ok {
				vals := c.Metric(m)
				rs.first[n], rs.last[n] = float64(vals[0]), float64(vals[len(vals)-1])
			}
		}
		return rs
	}
}

// wtd's flattening of serverStatus, on real servers' documents from 3.2 to
// 8.0, gives the names mongod's own diagnostic data gives the same fields
// (so a metric is one name whether sampled live or imported) with the same
// values; what FTDC counts and wtd does not keep are only array elements,
// timestamps' increments and decimals.
func TestFlattenAgreesWithMongodsOwnDiagnosticData(t *testing.T) {
	for _, rs := range realStatuses {
		t.Run(rs.version, func(t *testing.T) {
			s := loadRealStatus(t, rs.file)
			flat := FlattenNumbers(s.doc)
			if len(flat) < 400 {
				t.Fatalf("%d fields flattened", len(flat))
			}
			for k, v := range flat {
				fv, ok := s.first[k]
				if !ok {
					t.Errorf("flattened %q is not in the diagnostic data", k)
					continue
				}
				if math.Trunc(v) != fv && !(math.IsNaN(v) && fv == 0) && !(math.Abs(v) > 9.2e18) {
					t.Errorf("%q: flattened %v, diagnostic data %v", k, v, fv)
				}
			}
			for k := range s.first {
				if _, ok := flat[k]; ok || strings.HasSuffix(k, ".inc") {
					continue
				}
				if !arrayElement(k) && !isDecimal(s.doc, k) {
					t.Errorf("diagnostic data metric %q is not flattened", k)
				}
			}
		})
	}
}

// arrayElement says whether a dotted path goes through an array index.
func arrayElement(path string) bool {
	for _, part := range strings.Split(path, ".") {
		if part != "" && strings.Trim(part, "0123456789") == "" {
			return true
		}
	}
	return false
}

func isDecimal(doc bson.Raw, path string) bool {
	v, err := doc.LookupErr(strings.Split(path, ".")...)
	return err == nil && v.Type == bson.TypeDecimal128
}

// The server deltas and provenance counters read real servers' counters
// by the names each version uses: pages and bytes read into the cache and
// evictions from 3.2 on; application-thread eviction time only where the
// version reports it, else nil (shown as –), never 0. The tickets are in
// wiredTiger.concurrentTransactions up to 7.0 and in queues.execution from
// 8.0, as the real files show (the report's chart reads both).
func TestServerDeltasOnRealServers(t *testing.T) {
	for _, rs := range realStatuses {
		t.Run(rs.version, func(t *testing.T) {
			s := loadRealStatus(t, rs.file)
			pt := &peakTracker{metrics: []string{CacheMetric("bytes currently in the cache")}, peak: map[string]float64{}}
			pt.observe(s.first)
			pt.observe(s.last)
			d := serverDeltas(s.first, s.last, pt, nil)
			for name, v := range map[string]*float64{"pages read": d.PagesRead, "bytes read": d.BytesRead,
				"unmodified evicted": d.EvictedUnmodified, "cache peak": d.CacheUsedPeak, "cache max": d.CacheMax} {
				if v == nil || *v < 0 {
					t.Errorf("%s: %v, want a measured value", name, v)
				}
			}
			hasAppEvict := false
			for _, n := range record.AppThreadEvictMetrics {
				_, ok := s.first[n]
				hasAppEvict = hasAppEvict || ok
			}
			// From 4.0 on every version reports it, under one name or the
			// other (8.0 moved it into wiredTiger.cache).
			if rs.version >= "4" && !hasAppEvict {
				t.Errorf("no application-thread eviction time under %v", record.AppThreadEvictMetrics)
			}
			if (d.AppEvictMicros != nil) != hasAppEvict {
				t.Errorf("application-thread eviction time %v; the version reports it: %v", d.AppEvictMicros, hasAppEvict)
			}
			if !hasAppEvict && record.FmtOpt(d.AppEvictMicros, "%.1f", 1000) != record.Dash {
				t.Errorf("a counter the version lacks prints %q, want %s", record.FmtOpt(d.AppEvictMicros, "%.1f", 1000), record.Dash)
			}
			_, oldTickets := s.first["wiredTiger.concurrentTransactions.read.out"]
			_, newTickets := s.first["queues.execution.read.out"]
			if wantNew := rs.version >= "8"; newTickets != wantNew || oldTickets == wantNew {
				t.Errorf("tickets: concurrentTransactions %v, queues.execution %v; want the %s layout", oldTickets, newTickets,
					map[bool]string{true: "8.0", false: "pre-8.0"}[wantNew])
			}
		})
	}
}
