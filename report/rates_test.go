package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
)

// embeddedCharts is the JSON a report embeds for its charts.
type embeddedCharts struct {
	Seconds float64 `json:"seconds"`
	Runs    []int64 `json:"runs"`
	Charts  []struct {
		ID     string `json:"id"`
		Unit   string `json:"unit"`
		Series int    `json:"series"`
		Runs   []struct {
			Run    int64        `json:"run"`
			X      []float64    `json:"x"`
			Labels []string     `json:"labels"`
			Y      [][]*float64 `json:"y"`
		} `json:"runs"`
	} `json:"charts"`
}

// embeddedData parses the chart data out of a report page, as charts.js
// reads it.
func embeddedData(t *testing.T, page string) embeddedCharts {
	t.Helper()
	const open = `<script id="wtd-data" type="application/json">`
	_, rest, ok := strings.Cut(page, open)
	if !ok {
		t.Fatalf("the page has no %s", open)
	}
	text, _, ok := strings.Cut(rest, "</script>")
	if !ok {
		t.Fatal("the chart data does not end")
	}
	var d embeddedCharts
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		t.Fatalf("chart data: %v\n%.300s", err, text)
	}
	return d
}

// countersRun records a run of 40 seconds sampled every half second:
// server counters that grow at known rates from large values (a server up
// for long) and start again from zero after a restart at 20 s (the sample
// at 20 s is missing: the server was down), gauges, and the host's disk
// throughput (which the host collector records per second already).
func countersRun(t *testing.T, st *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "counters.lua", Playbook: "-- counters", StartedAt: start,
		Host: store.HostFacts{Cores: 2, MemoryBytes: 8 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddServer(ctx, id, store.ServerRecord{Name: "m1", Started: true, URI: "mongodb://127.0.0.1:27017", Binary: "mongod", Version: "7.0.0"}); err != nil {
		t.Fatal(err)
	}
	c := engine.CacheMetric
	for i := range 80 {
		secs := float64(i) / 2
		ts := start.Add(time.Duration(i) * 500 * time.Millisecond)
		st.AddSample(id, "host", ts, map[string]float64{"cpu.user": 30, "cpu.system": 5, "cpu.iowait": 1,
			"disk.vda.read_bytes": 3 << 20, "disk.vda.write_bytes": 1 << 20})
		if secs == 20 {
			continue // restarting
		}
		// Seconds of counting since the server (re)started, and where
		// its counters began.
		up, read, written, evict := secs, 5e9, 3e8, 7e10
		if secs > 20 {
			up, read, written, evict = secs-20, 0, 0, 0
		}
		st.AddSample(id, "server:m1", ts, map[string]float64{
			c("pages read into cache"):            read + 100*up,
			c("pages written from cache"):         written + 50*up,
			record.AppThreadEvictMetric:           evict + 2000*up,
			c("bytes currently in the cache"):     500 << 20,
			c("tracked dirty bytes in the cache"): 20 << 20,
			c("maximum bytes configured"):         1 << 30,
		})
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", start.Add(40*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCounterChartsArePerSecondRates: in the data the page embeds, the
// counters' lines are per-second rates (pages read 100/s, written 50/s,
// application-thread eviction 2 ms/s), not their running totals, with no
// value before the first difference and none negative or above the rate
// where the restart reset them; gauges (cache bytes) and the host's disk
// throughput, recorded per second already, are drawn as recorded.
func TestCounterChartsArePerSecondRates(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	id := countersRun(t, st)
	var page bytes.Buffer
	if err := WriteHTML(ctx, st, &page, id); err != nil {
		t.Fatal(err)
	}
	d := embeddedData(t, page.String())

	// Per line: the value it must show at each sample; at the restart (the
	// first sample after it, 20.5 s, a second after the one before) the
	// rate may be lower, never negative.
	want := map[string]map[string]float64{
		"pages": {"read into cache": 100, "written from cache": 50},
		"evict": {"app-thread eviction": 2},
		"cache": {"cache used": 500, "dirty": 20, "configured maximum": 1024},
		"disk":  {"vda read": 3, "vda write": 1},
	}
	counters := map[string]bool{"pages": true, "evict": true}
	seen := map[string]bool{}
	for _, c := range d.Charts {
		lines, ok := want[c.ID]
		if !ok {
			continue
		}
		seen[c.ID] = true
		if len(c.Runs) != 1 || len(c.Runs[0].Labels) != len(lines) || len(c.Runs[0].Y) != len(lines) {
			t.Errorf("chart %s: %d runs, want 1 with lines %v", c.ID, len(c.Runs), lines)
			continue
		}
		r := c.Runs[0]
		if n := map[bool]int{true: 80, false: 79}[c.ID == "disk"]; len(r.X) != n {
			t.Errorf("chart %s: %d samples, want %d", c.ID, len(r.X), n)
		}
		for k, label := range r.Labels {
			w, ok := lines[label]
			if !ok {
				t.Errorf("chart %s: line %q, want one of %v", c.ID, label, lines)
				continue
			}
			y := r.Y[k]
			if len(y) != len(r.X) {
				t.Fatalf("chart %s %s: %d values for %d x", c.ID, label, len(y), len(r.X))
			}
			for i, v := range y {
				switch {
				case counters[c.ID] && i == 0:
					if v != nil {
						t.Errorf("chart %s %s: %v at the first sample, before any difference: want null", c.ID, label, *v)
					}
				case v == nil:
					t.Errorf("chart %s %s at %g s: null, want %g", c.ID, label, r.X[i], w)
				case counters[c.ID] && r.X[i] == 20.5:
					if *v < 0 || *v > w*1.001 {
						t.Errorf("chart %s %s just after the restart: %v, want between 0 and %g", c.ID, label, *v, w)
					}
				case math.Abs(*v-w) > w*0.001:
					t.Errorf("chart %s %s at %g s: %v %s, want %g", c.ID, label, r.X[i], *v, c.Unit, w)
				}
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("the page has no chart %s", id)
		}
	}
}
