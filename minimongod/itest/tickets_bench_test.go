package itest

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSlowReadsTickets reproduces the published ticket table: 16 slow
// reads at once with 5 and with 128 read tickets. One iteration is one
// round of 16 reads; metrics are means over the rounds (out_max and
// queue_max are maxima):
//
//	go test ./minimongod/itest -run '^$' -bench SlowReadsTickets -benchtime 3x
func BenchmarkSlowReadsTickets(b *testing.B) {
	s := start(b)
	loadSlowCollection(b, s, "t", "slow", slowDocs)
	if _, err := slowRead(s, "t", "slow"); err != nil { // warm the cache
		b.Fatal(err)
	}
	for _, tickets := range []int{5, 128} {
		b.Run(fmt.Sprintf("tickets=%d", tickets), func(b *testing.B) {
			setParam(b, s, "executionControlConcurrentReadTransactions", tickets)
			var total, median, queued time.Duration
			var outMax, queueMax int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run := runSlowReads(b, s, 16)
				total += run.total
				median += run.median()
				queued += run.meanQueued()
				outMax, queueMax = max(outMax, run.outMax), max(queueMax, run.queueMax)
			}
			n := float64(b.N)
			b.ReportMetric(float64(total.Milliseconds())/n, "total_ms")
			b.ReportMetric(float64(median.Milliseconds())/n, "median_ms")
			b.ReportMetric(float64(outMax), "out_max")
			b.ReportMetric(float64(queueMax), "queue_max")
			b.ReportMetric(float64(queued.Milliseconds())/n, "mean_queued_ms")
		})
	}
}
