package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms count microseconds from 1 µs to 60 s. Run-long
// histograms keep 3 significant digits; the per-second ones behind
// Result.Series keep 2, which is plenty for a p99 per second and
// makes them about 20 KB instead of 140 KB.
const (
	histLowestMicros  = 1
	histHighestMicros = 60 * 1000 * 1000
	histDigits        = 3
	histSecondDigits  = 2
)

// OpStats summarises one kind of operation (or one kind of batch): how many
// succeeded, how many failed, the rate of successes over the elapsed time and
// the latency distribution of the successes in microseconds.
type OpStats struct {
	Count      int64   `json:"count"`
	Errors     int64   `json:"errors"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	MeanMicros float64 `json:"mean_micros"`
	P50Micros  float64 `json:"p50_micros"`
	P95Micros  float64 `json:"p95_micros"`
	P99Micros  float64 `json:"p99_micros"`
	MaxMicros  float64 `json:"max_micros"`
	// Docs counts the documents that scans and queries returned (a count
	// query's n).
	Docs int64 `json:"docs,omitempty"`
	// Service, in an open loop (a rate), has the latencies from each
	// operation's actual send, beside the corrected ones above.
	Service *LatencyStats `json:"service,omitempty"`
}

// LatencyStats is a latency distribution in microseconds.
type LatencyStats struct {
	MeanMicros float64 `json:"mean_micros"`
	P50Micros  float64 `json:"p50_micros"`
	P95Micros  float64 `json:"p95_micros"`
	P99Micros  float64 `json:"p99_micros"`
	MaxMicros  float64 `json:"max_micros"`
}

// newLatencyHistogram returns an empty run-long latency histogram.
func newLatencyHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowestMicros, histHighestMicros, histDigits)
}

// newSecondHistogram returns an empty per-second latency histogram.
func newSecondHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowestMicros, histHighestMicros, histSecondDigits)
}

// recordLatency adds d to h in microseconds, clamped to the histogram's
// range so that nothing is silently dropped: a sub-microsecond operation
// counts as 1 µs, one over 60 s as 60 s.
func recordLatency(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histLowestMicros {
		us = histLowestMicros
	} else if us > histHighestMicros {
		us = histHighestMicros
	}
	_ = h.RecordValue(us) // cannot fail: us is within the range
}

// latencyStats turns a histogram of successes plus an error count into
// OpStats, with the rate taken over elapsed.
func latencyStats(h *hdrhistogram.Histogram, errors int64, elapsed time.Duration) OpStats {
	s := OpStats{Count: h.TotalCount(), Errors: errors}
	if elapsed > 0 {
		s.OpsPerSec = float64(s.Count) / elapsed.Seconds()
	}
	if s.Count == 0 {
		return s
	}
	s.MeanMicros = h.Mean()
	s.P50Micros = float64(h.ValueAtQuantile(50))
	s.P95Micros = float64(h.ValueAtQuantile(95))
	s.P99Micros = float64(h.ValueAtQuantile(99))
	s.MaxMicros = float64(h.Max())
	return s
}

// MergeSeconds merges the latency histograms of the given seconds, of the
// operations named (all when ops is empty): the exact distribution of
// their latencies, within the per-second histograms' two significant
// digits. It returns nil when no second holds one; a histogram that does
// not decode is an error naming its second.
func MergeSeconds(points []SecondPoint, ops ...string) (*hdrhistogram.Histogram, error) {
	var out *hdrhistogram.Histogram
	for _, p := range points {
		for op, enc := range p.Hist {
			if len(ops) > 0 && !slices.Contains(ops, op) {
				continue
			}
			h, err := hdrhistogram.Decode([]byte(enc))
			if err != nil {
				return nil, fmt.Errorf("second %d, %s: latency histogram: %w", p.Second, op, err)
			}
			if out == nil {
				out = newSecondHistogram()
			}
			out.Merge(h)
		}
	}
	return out, nil
}
