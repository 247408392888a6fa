package report

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"wtd/engine/ftdcimport"
	"wtd/engine/store"
	"wtd/internal/ftdc"
)

const ftdcData = "../internal/ftdc/testdata/"

// Real FTDC files (internal/ftdc/testdata/SOURCES.md says what each is).
const (
	// 3.2 on Arch Linux: no systemMetrics.
	ftdc3210 = ftdcData + "3.2.10/Antystenes+tas2016--metrics.2016-11-21T11-33-59Z-00000"
	// 7.0 on Ubuntu: tickets as wiredTiger.concurrentTransactions.
	ftdc70 = ftdcData + "7.0.0-rc6/b1ron+ftdc--metrics.2024-04-16T11-34-42Z-00000"
	// An 8.0 replica set's primary with two secondaries: queues.execution.
	ftdc8015 = ftdcData + "8.0.15/PHieu160105+mongodb_replica--metrics.interim"
)

var (
	importsOnce sync.Once
	importsDir  string // removed by TestMain
	importsDB   string
	importsRuns map[string]int64
	importsErr  error
)

// imported returns a store holding one import each of the files above
// (made once for the package's tests) and the run of each file.
func imported(t *testing.T) (*store.Store, map[string]int64) {
	t.Helper()
	importsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-report-imports-")
		if err != nil {
			importsErr = err
			return
		}
		importsDir, importsDB = dir, filepath.Join(dir, "wtd.db")
		ctx := context.Background()
		st, err := store.Open(ctx, importsDB)
		if err != nil {
			importsErr = err
			return
		}
		defer st.Close(ctx)
		importsRuns = map[string]int64{}
		for _, p := range []string{ftdc3210, ftdc70, ftdc8015} {
			rep, err := ftdcimport.Import(ctx, st, []string{p}, ftdcimport.Options{})
			if err != nil {
				importsErr = err
				return
			}
			if len(rep.Runs) != 1 {
				importsErr = errors.New(p + ": not one run")
				return
			}
			importsRuns[p] = rep.Runs[0].Run
		}
	})
	if importsErr != nil {
		t.Fatal(importsErr)
	}
	st, err := store.OpenExisting(context.Background(), importsDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st, importsRuns
}

func chartsByID(m *Model) map[string]Chart {
	out := map[string]Chart{}
	for _, c := range m.Charts {
		out[c.ID] = c
	}
	return out
}

func labels(c Chart) []string {
	var out []string
	for _, r := range c.Runs {
		for _, s := range r.Series {
			out = append(out, s.Label)
		}
	}
	return out
}

// measured counts the points of a chart's lines that are not gaps.
func measured(c Chart) int {
	n := 0
	for _, r := range c.Runs {
		for _, s := range r.Series {
			for _, y := range s.Y {
				if !math.IsNaN(y) {
					n++
				}
			}
		}
	}
	return n
}

// TestImportedCharts: the report of an import draws the same charts as a
// run's, from the names each version gives them: tickets from
// wiredTiger.concurrentTransactions (7.0) or queues.execution (8.0),
// application-thread eviction from thread-yield (7.0) or cache (8.0), the
// host from systemMetrics; and a replication-lag chart where
// replSetGetStatus has secondaries. What a version lacks is no chart or a
// gap, never a line of zeros.
func TestImportedCharts(t *testing.T) {
	st, runs := imported(t)
	ctx := context.Background()
	for _, tc := range []struct {
		path   string
		want   map[string]int // chart -> lines
		absent []string
	}{
		{ftdc70, map[string]int{"cache": 3, "pages": 2, "evict": 1, "tickets": 4, "cpu": 3, "disk": 2}, []string{"repl", "ops", "p99"}},
		{ftdc8015, map[string]int{"cache": 3, "pages": 2, "evict": 1, "tickets": 4, "cpu": 3, "disk": 12, "repl": 2}, []string{"ops", "p99"}},
		// 3.2 has no application-thread eviction time yet.
		{ftdc3210, map[string]int{"cache": 3, "pages": 2, "tickets": 4}, []string{"evict", "cpu", "disk", "repl"}},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.path)), func(t *testing.T) {
			m, err := Load(ctx, st, runs[tc.path])
			if err != nil {
				t.Fatal(err)
			}
			got := chartsByID(m)
			for id, lines := range tc.want {
				c, ok := got[id]
				if !ok {
					t.Errorf("no %s chart", id)
					continue
				}
				if c.SeriesCount() != lines || measured(c) == 0 {
					t.Errorf("chart %s: %d lines %q, %d points measured; want %d lines", id, c.SeriesCount(), labels(c), measured(c), lines)
				}
			}
			for _, id := range tc.absent {
				if c, ok := got[id]; ok {
					t.Errorf("chart %s drawn with %q: the file has nothing for it", id, labels(c))
				}
			}
		})
	}
}

// TestTicketsFromEitherLayout checks the tickets chart's lines against the
// file: 7.0's wiredTiger.concurrentTransactions.read.out, 8.0's
// queues.execution.read.out, sample for sample.
func TestTicketsFromEitherLayout(t *testing.T) {
	st, runs := imported(t)
	for path, name := range map[string]string{
		ftdc70:   "serverStatus.wiredTiger.concurrentTransactions.read.out",
		ftdc8015: "serverStatus.queues.execution.read.out",
	} {
		m, err := Load(context.Background(), st, runs[path])
		if err != nil {
			t.Fatal(err)
		}
		c := chartsByID(m)["tickets"]
		raw := fileColumn(t, path, name)
		y := c.Runs[0].Series[0].Y
		if c.Runs[0].Series[0].Label != "read tickets out" || len(raw) == 0 {
			t.Fatalf("%s: first line %q, %d values of %s in the file", path, c.Runs[0].Series[0].Label, len(raw), name)
		}
		if len(y) != len(raw) {
			t.Fatalf("%s: %d points, the file has %d samples of %s", path, len(y), len(raw), name)
		}
		for i := range raw {
			if y[i] != raw[i] {
				t.Fatalf("%s sample %d: %v read tickets out, the file's %s says %v", path, i, y[i], name, raw[i])
			}
		}
	}
}

// TestReplicationLagFromTheFile: the lag of each secondary of the 8.0
// replica set is the primary's members.N.optimeDate less its own, in
// seconds, sample for sample.
func TestReplicationLagFromTheFile(t *testing.T) {
	st, runs := imported(t)
	m, err := Load(context.Background(), st, runs[ftdc8015])
	if err != nil {
		t.Fatal(err)
	}
	c := chartsByID(m)["repl"]
	if len(c.Runs) != 1 || len(c.Runs[0].Series) != 2 {
		t.Fatalf("replication chart %+v, want one run with two secondaries", labels(c))
	}
	primary := fileColumn(t, ftdc8015, "replSetGetStatus.members.0.optimeDate")
	if s := fileColumn(t, ftdc8015, "replSetGetStatus.members.0.state"); s[0] != 1 {
		t.Fatalf("member 0 is in state %v, want the primary (1)", s[0])
	}
	nonzero := 0
	for k, member := range []int{1, 2} {
		ser := c.Runs[0].Series[k]
		if want := "secondary _id " + string(rune('0'+member)); ser.Label != want {
			t.Errorf("line %q, want %q", ser.Label, want)
		}
		own := fileColumn(t, ftdc8015, "replSetGetStatus.members."+string(rune('0'+member))+".optimeDate")
		if len(ser.Y) != len(own) {
			t.Fatalf("%d points, the file has %d samples", len(ser.Y), len(own))
		}
		for i := range own {
			if want := (primary[i] - own[i]) / 1000; ser.Y[i] != want {
				t.Fatalf("%s sample %d: lag %v s, the file says %v", ser.Label, i, ser.Y[i], want)
			}
			if ser.Y[i] != 0 {
				nonzero++
			}
		}
	}
	t.Logf("%d of %d lag points are not 0", nonzero, 2*len(primary))
}

// fileColumn reads one metric of a file, sample by sample, as FTDC has it.
func fileColumn(t *testing.T, path, name string) []float64 {
	t.Helper()
	r, err := ftdc.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []float64
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := it.(*ftdc.Chunk); ok {
			for _, v := range c.Lookup(name) {
				out = append(out, float64(v))
			}
		}
	}
}
