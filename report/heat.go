package report

import (
	"fmt"
	"math"

	"wtd/engine/record"
	"wtd/engine/workload"
)

// heatCharts are a latency heatmap per run whose workload steps kept their
// seconds' latency histograms: time along x (the middle of each second, as
// the p99 chart), latency buckets along y (powers of two of microseconds,
// over the latencies seen), and in each cell the count of operations of
// that second in that bucket, all operation types together. A server that
// froze for a second shows as a band of high latencies, which a p99 per
// second shows as one point. Each bucket is a series of the chart (its
// counts per second, NaN between steps); Chart.Heat holds the buckets'
// edges in ms.
func heatCharts(recs []*record.Record) ([]Chart, error) {
	var out []Chart
	for _, rec := range recs {
		c, err := heatChart(rec)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, *c)
		}
	}
	return out, nil
}

// heatSecond is one second of a heatmap: its place on the time axis and its
// operations' latencies in (from, to] µs ranges.
type heatSecond struct {
	x    float64
	bars []heatBar
	gap  bool // no operation: a gap (between steps)
}

type heatBar struct {
	to    int64
	count int64
}

func heatChart(rec *record.Record) (*Chart, error) {
	var secs []heatSecond
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, st := range rec.Steps {
		points := record.SecondPoints(st)
		if len(points) > 1 {
			points = points[:len(points)-1] // the last, partial second, as the p99 chart
		}
		start := rel(rec, st.Start)
		had := false
		for i, p := range points {
			h, err := workload.MergeSeconds([]workload.SecondPoint{p})
			if err != nil {
				return nil, fmt.Errorf("run %d, step %d: %w", rec.Run.ID, st.Seq, err)
			}
			s := heatSecond{x: start + float64(i) + 0.5, gap: h == nil}
			if h != nil {
				had = true
				for _, b := range h.Distribution() {
					if b.Count > 0 {
						s.bars = append(s.bars, heatBar{to: b.To, count: b.Count})
						lo, hi = min(lo, b.To), max(hi, b.To)
					}
				}
			}
			secs = append(secs, s)
		}
		if had {
			secs = append(secs, heatSecond{x: start + float64(len(points)), gap: true})
		}
	}
	if hi == 0 {
		return nil, nil
	}
	// Buckets (2^(k-1), 2^k] µs from the one holding the lowest latency
	// to the one holding the highest.
	kLo, kHi := bucketOf(lo), bucketOf(hi)
	n := kHi - kLo + 1
	c := &Chart{ID: fmt.Sprintf("heat-%d", rec.Run.ID), Title: fmt.Sprintf("Latency heatmap, run %d", rec.Run.ID), Unit: "ms",
		Note: "each workload second's operations by latency (all types together, from the seconds' own histograms): the darker a cell, the more operations; a server that stalls shows as a band high up",
		Heat: make([]float64, n+1)}
	for k := range n + 1 {
		c.Heat[k] = math.Ldexp(1, kLo+k-1) / 1000
	}
	rd := RunData{Run: rec.Run.ID, Series: make([]Series, n)}
	for k := range rd.Series {
		rd.Series[k].Label = fmt.Sprintf("≤ %s ms", compactMS(c.Heat[k+1]))
	}
	for i, s := range secs {
		x := s.x
		if i > 0 && x <= rd.X[i-1] {
			x = rd.X[i-1] + 0.001
		}
		rd.X = append(rd.X, x)
		for k := range rd.Series {
			v := 0.0
			if s.gap {
				v = math.NaN()
			}
			rd.Series[k].Y = append(rd.Series[k].Y, v)
		}
		for _, b := range s.bars {
			rd.Series[bucketOf(b.to)-kLo].Y[i] += float64(b.count)
		}
	}
	c.Runs = []RunData{rd}
	return c, nil
}

// bucketOf is k such that us is in (2^(k-1), 2^k].
func bucketOf(us int64) int {
	if us <= 1 {
		return 0
	}
	return int(math.Ceil(math.Log2(float64(us))))
}

// compactMS words a bucket's edge: 0.064, 1, 2048.
func compactMS(ms float64) string {
	if ms >= 1 {
		return fmt.Sprintf("%.0f", ms)
	}
	return fmt.Sprintf("%.3g", ms)
}
