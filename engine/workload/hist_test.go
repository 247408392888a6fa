package workload

import (
	"math"
	"testing"
	"time"
)

func TestLatencyStats(t *testing.T) {
	h := newLatencyHistogram()
	for i := 1; i <= 1000; i++ {
		recordLatency(h, time.Duration(i)*time.Microsecond)
	}
	recordLatency(h, 10*time.Nanosecond) // counts as 1 µs
	recordLatency(h, 2*time.Minute)      // counts as 60 s
	s := latencyStats(h, 5, 2*time.Second)
	tests := []struct {
		name      string
		got, want float64
	}{
		{"count", float64(s.Count), 1002},
		{"errors", float64(s.Errors), 5},
		{"ops/s", s.OpsPerSec, 501},
		{"p50", s.P50Micros, 500},
		{"p95", s.P95Micros, 951},
		{"p99", s.P99Micros, 991},
		{"max", s.MaxMicros, 60e6},
	}
	for _, tt := range tests {
		if math.Abs(tt.got-tt.want) > tt.want*0.002 {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if empty := latencyStats(newLatencyHistogram(), 0, 0); empty != (OpStats{}) {
		t.Errorf("stats of nothing: %+v", empty)
	}
}
