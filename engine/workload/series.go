package workload

import (
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// seriesCollector builds Result.Series. Each thread collects its
// current second on its own and hands it over when one of its operations
// finishes in a later second (so the lock is taken about once per second
// per thread, never per operation). A second is final once every thread has
// moved past it; it is then turned into a SecondPoint and its histograms are
// reused.
type seriesCollector struct {
	mu      sync.Mutex
	used    [numOps]bool
	passed  []int // per thread: the first second it may still add to
	pending map[int]*secondTotals
	free    []*secondTotals
	next    int // the first second not yet final
	last    int // the last second with an operation, -1 before any
	points  []SecondPoint
	// sofar merges every operation of the seconds handed over, for status
	// lines; nil when the workload prints none.
	sofar *hdrhistogram.Histogram
}

// secondTotals is one second summed over the threads that have handed it
// over.
type secondTotals struct {
	counts, errs [numOps]int64
	hists        [numOps]*hdrhistogram.Histogram
}

// newSeriesCollector collects threads' seconds; status says whether status
// lines will ask for the p99 so far.
func newSeriesCollector(threads int, used [numOps]bool, status bool) *seriesCollector {
	c := &seriesCollector{used: used, passed: make([]int, threads), pending: map[int]*secondTotals{}, last: -1}
	if status {
		c.sofar = newSecondHistogram()
	}
	return c
}

// flush hands over t's current second, resets t's per-second fields and
// moves t on to second next (math.MaxInt: t is finished).
func (c *seriesCollector) flush(t *workloadThread, next int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.secCounts != [numOps]int64{} || t.secErrs != [numOps]int64{} {
		st := c.totals(t.sec)
		for op := range numOps {
			if !c.used[op] {
				continue
			}
			st.counts[op] += t.secCounts[op]
			st.errs[op] += t.secErrs[op]
			if t.secCounts[op] > 0 {
				st.hists[op].Merge(t.secHists[op])
				if c.sofar != nil {
					c.sofar.Merge(t.secHists[op])
				}
				t.secHists[op].Reset()
			}
		}
		t.secCounts, t.secErrs = [numOps]int64{}, [numOps]int64{}
		c.last = max(c.last, t.sec)
	}
	t.sec = next
	c.passed[t.id] = next
	c.finalise(min(slicesMin(c.passed), c.last+1))
}

// totals returns the pending totals of second s, creating them if needed.
func (c *seriesCollector) totals(s int) *secondTotals {
	if st, ok := c.pending[s]; ok {
		return st
	}
	var st *secondTotals
	if n := len(c.free); n > 0 {
		st, c.free = c.free[n-1], c.free[:n-1]
	} else {
		st = &secondTotals{hists: histogramsFor(c.used, newSecondHistogram)}
	}
	c.pending[s] = st
	return st
}

// finalise turns the seconds before end into points.
func (c *seriesCollector) finalise(end int) {
	for ; c.next < end; c.next++ {
		p := SecondPoint{Second: c.next, Counts: map[string]int64{}, P99Micros: map[string]float64{}}
		st := c.pending[c.next]
		for op := range numOps {
			if !c.used[op] {
				continue
			}
			name := opNames[op]
			// A count is measured even when it is 0; a p99 only when
			// an operation of the type succeeded in the second.
			p.Counts[name] = 0
			if st == nil {
				continue
			}
			p.Counts[name] = st.counts[op]
			if st.counts[op] > 0 {
				p.P99Micros[name] = float64(st.hists[op].ValueAtQuantile(99))
				if enc, err := st.hists[op].Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
					if p.Hist == nil {
						p.Hist = map[string]string{}
					}
					p.Hist[name] = string(enc)
				}
			}
			if st.errs[op] > 0 {
				if p.Errors == nil {
					p.Errors = map[string]int64{}
				}
				p.Errors[name] = st.errs[op]
			}
		}
		if st != nil {
			delete(c.pending, c.next)
			for op := range numOps {
				if st.hists[op] != nil {
					st.hists[op].Reset()
				}
			}
			st.counts, st.errs = [numOps]int64{}, [numOps]int64{}
			c.free = append(c.free, st)
		}
		c.points = append(c.points, p)
	}
}

func slicesMin(xs []int) int {
	m := math.MaxInt
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

// p99SoFar returns the p99 latency of the operations of the seconds the
// threads have handed over so far, in microseconds (0 before any).
func (c *seriesCollector) p99SoFar() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sofar == nil || c.sofar.TotalCount() == 0 {
		return 0
	}
	return float64(c.sofar.ValueAtQuantile(99))
}

// lastSecond returns the last second turned into a point and its p99
// latency over the operations of the mix (the largest of theirs; 0 when
// none succeeded in it); ok is false before any.
func (c *seriesCollector) lastSecond() (sec int, p99 float64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.points) == 0 {
		return 0, 0, false
	}
	p := c.points[len(c.points)-1]
	for _, v := range p.P99Micros {
		p99 = max(p99, v)
	}
	return p.Second, p99, true
}
