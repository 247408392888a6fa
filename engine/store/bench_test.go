package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sampler feeds a store as the 1 Hz sampler does: one serverStatus-like map
// of the target and a smaller one of the host per interval.
type sampler struct {
	s            *Store
	runID        int64
	server, host *serverStatusLike
	ts           time.Time
}

func newSampler(t testing.TB, path string, serverKeys int) *sampler {
	t.Helper()
	s := openTest(t, path, Options{FlushInterval: -1})
	runID, err := s.CreateRun(context.Background(), RunInfo{PlaybookPath: "bench.lua"})
	if err != nil {
		t.Fatal(err)
	}
	return &sampler{s: s, runID: runID, server: newServerStatusLike(1, serverKeys, 0.1),
		host: newServerStatusLike(2, 60, 0.5), ts: time.Unix(1700000000, 0)}
}

// tick adds one interval's samples; serverOnly leaves the host out.
func (p *sampler) tick(serverOnly bool) {
	p.ts = p.ts.Add(time.Second)
	p.s.AddSample(p.runID, "server:m1", p.ts, p.server.next())
	if !serverOnly {
		p.s.AddSample(p.runID, "host", p.ts, p.host.next())
	}
}

// fileSize checkpoints the WAL into the database file and returns its size.
func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestSampleStorageBudget checks the bytes on disk per serverStatus sample of
// an 800-metric map that moves 10% of its values per second, written as the
// sampler writes: a transaction per interval, host samples interleaved.
func TestSampleStorageBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1200 samples")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	p := newSampler(t, path, 800)
	p.tick(true)
	if err := p.s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path) // the run and the metric names
	const n = 1200
	for range n {
		p.tick(true)
		if err := p.s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	perSample := float64(fileSize(t, path)-before) / n
	t.Logf("%.0f bytes per sample on disk", perSample)
	if perSample > 400 {
		t.Errorf("%.0f bytes per 800-metric sample on disk, budget 400", perSample)
	}
}

// BenchmarkAddSample measures one 1 Hz interval of one 800-metric server
// sample: AddSample and the transaction that commits it (Flush), as the
// sampler's interval is far longer than the store's flush interval. It
// reports the process CPU time per sample (both goroutines, SQLite
// included) and the bytes on disk per sample; use -benchtime=3600x for a
// steady bytes/sample.
func BenchmarkAddSample(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		host  bool // a host sample interleaved in every interval
		flush int  // intervals per transaction
	}{
		{"server/commit-each", false, 1},
		{"server+host/commit-each", true, 1},
		{"server/batched", false, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "wtd.db")
			p := newSampler(b, path, 800)
			p.tick(!bc.host)
			if err := p.s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			before := fileSize(b, path)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := range b.N {
				p.tick(!bc.host)
				if (i+1)%bc.flush == 0 {
					if err := p.s.Flush(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := p.s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			cpu := processCPU() - cpu0
			b.StopTimer()
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1e3, "cpu-µs/interval")
			b.ReportMetric(float64(fileSize(b, path)-before)/float64(b.N), "disk-bytes/interval")
		})
	}
}
