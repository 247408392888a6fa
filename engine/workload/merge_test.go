package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestMergedPercentilesArePooledOnes: percentiles of the seconds' histograms
// merged equal those of all the raw latencies pooled, within the histograms'
// two significant digits, where the mean of the seconds' p99s does not: one
// slow second (a server freeze) moves the pooled p99 a little and the mean
// of p99s a lot.
func TestMergedPercentilesArePooledOnes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var raw []float64
	var points []SecondPoint
	var meanP99 float64
	for s := range 20 {
		h := newSecondHistogram()
		n := 200 + rng.IntN(800)
		for range n {
			us := math.Exp(5.5 + 0.6*rng.NormFloat64()) // about 250 µs
			if s == 7 {
				us += 400_000 * rng.Float64() // the freeze: up to 0.4 s
			}
			d := time.Duration(us * float64(time.Microsecond))
			recordLatency(h, d)
			raw = append(raw, float64(max(d.Microseconds(), 1)))
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		meanP99 += float64(h.ValueAtQuantile(99)) / 20
		points = append(points, SecondPoint{Second: s, Counts: map[string]int64{OpRead: int64(n)}, Hist: map[string]string{OpRead: string(enc)}})
	}
	merged, err := MergeSeconds(points)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(raw)
	if merged.TotalCount() != int64(len(raw)) {
		t.Fatalf("merged %d latencies of %d", merged.TotalCount(), len(raw))
	}
	for _, q := range []float64{50, 90, 99, 99.9} {
		exact := raw[int(math.Ceil(q/100*float64(len(raw))))-1]
		got := float64(merged.ValueAtQuantile(q))
		if math.Abs(got-exact) > 0.01*exact+1 {
			t.Errorf("p%g: merged %g, pooled %g (more than 1%% apart)", q, got, exact)
		}
	}
	p99 := raw[int(math.Ceil(0.99*float64(len(raw))))-1]
	if math.Abs(meanP99-p99) < 0.2*p99 {
		t.Errorf("mean of the seconds' p99s %g is within 20%% of the pooled p99 %g: the test shows nothing", meanP99, p99)
	}
	if _, err := MergeSeconds([]SecondPoint{{Second: 3, Hist: map[string]string{OpRead: "not a histogram"}}}); err == nil {
		t.Error("a histogram that does not decode merged")
	}
}

// BenchmarkSecondHistogram is what keeping a second's histogram costs: the
// encoding once per second and operation type (reported per encoding, and
// as a share of a second), and its size stored, for a second of 10,000
// operations with latencies spread over two decades (reported as
// hist_B/op-second: the budget is 2,048).
func BenchmarkSecondHistogram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	h := newSecondHistogram()
	for range 10000 {
		recordLatency(h, time.Duration(math.Exp(5.5+1.0*rng.NormFloat64())*float64(time.Microsecond)))
	}
	var size int
	b.ResetTimer()
	for b.Loop() {
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			b.Fatal(err)
		}
		size = len(enc)
	}
	b.ReportMetric(float64(size), "hist_B/op-second")
	b.ReportMetric(100*b.Elapsed().Seconds()/float64(b.N), "%_of_a_second")
}
