package ftdcimport

import (
	"math"
	"time"

	"wtd/engine"
	"wtd/engine/record"
)

// The serverStatus metrics of opLatencies the per-second series read,
// besides engine.DeltaMetrics.
const (
	readLatency  = "opLatencies.reads.latency"
	readOps      = "opLatencies.reads.ops"
	writeLatency = "opLatencies.writes.latency"
	writeOps     = "opLatencies.writes.ops"
)

var (
	opcounters = []string{"opcounters.insert", "opcounters.query", "opcounters.update", "opcounters.delete",
		"opcounters.getmore", "opcounters.command"}
	pagesRead = engine.CacheMetric("pages read into cache")
	cacheUsed = engine.CacheMetric("bytes currently in the cache")
	dirtyUsed = engine.CacheMetric("tracked dirty bytes in the cache")
)

// stepMetrics are the metrics a step's figures need: its server deltas
// and peaks, and its per-second series.
func stepMetrics() []string {
	return append(engine.DeltaMetrics(), readLatency, readOps, writeLatency, writeOps)
}

// A secondFigure is one series of record.ServerSeconds: its value over
// the interval from sample a to sample b (dt seconds apart), ok false when
// there is none. A level is b's value. present says whether a sample has
// what the figure reads: a series none of whose samples has it is not in
// the server's serverStatus.
type secondFigure struct {
	level bool
	needs []string // all of them (any, for a sum of rates)
	any   bool
	value func(a, b map[string]float64, dt float64) (float64, bool)
}

func (f secondFigure) present(m map[string]float64) bool {
	for _, n := range f.needs {
		_, ok := m[n]
		if ok && f.any {
			return true
		}
		if !ok && !f.any {
			return false
		}
	}
	return !f.any
}

func rate(names ...string) func(a, b map[string]float64, dt float64) (float64, bool) {
	return func(a, b map[string]float64, dt float64) (float64, bool) {
		var sum float64
		found := false
		for _, n := range names {
			va, okA := a[n]
			vb, okB := b[n]
			if !okA || !okB {
				continue
			}
			if vb < va {
				return 0, false // a counter went back: not one process's
			}
			sum, found = sum+vb-va, true
		}
		if !found || dt <= 0 {
			return 0, false
		}
		return sum / dt, true
	}
}

func meanLatency(latency, ops string) func(a, b map[string]float64, dt float64) (float64, bool) {
	return func(a, b map[string]float64, _ float64) (float64, bool) {
		la, ok1 := a[latency]
		lb, ok2 := b[latency]
		oa, ok3 := a[ops]
		ob, ok4 := b[ops]
		if !ok1 || !ok2 || !ok3 || !ok4 || ob <= oa || lb < la {
			return 0, false // no operation finished: no latency
		}
		return (lb - la) / (ob - oa), true
	}
}

func level(name string) func(a, b map[string]float64, dt float64) (float64, bool) {
	return func(_, b map[string]float64, _ float64) (float64, bool) {
		v, ok := b[name]
		return v, ok
	}
}

// figures are record.ServerSeconds' series, in the order of
// secondsTracker's columns.
var figures = []secondFigure{
	{needs: opcounters, any: true, value: rate(opcounters...)},
	{needs: []string{readLatency, readOps}, value: meanLatency(readLatency, readOps)},
	{needs: []string{writeLatency, writeOps}, value: meanLatency(writeLatency, writeOps)},
	{needs: []string{pagesRead}, value: rate(pagesRead)},
	{needs: []string{record.AppThreadEvictMetric}, value: rate(record.AppThreadEvictMetric)},
	{needs: []string{cacheUsed}, level: true, value: level(cacheUsed)},
	{needs: []string{dirtyUsed}, level: true, value: level(dirtyUsed)},
}

// secondsTracker turns a step's samples into per-second series: the
// samples are grouped by the second they fall in, and each second's value
// is taken from the last sample of the second before that has one to the
// last sample of this second (a server sampled every 100 ms gives one value
// a second; one sampled every 10 s gives a value every 10 s, seconds
// between unmeasured).
type secondsTracker struct {
	first, anchor, pend map[string]float64
	firstTS, anchorTS   int64
	pendTS              int64
	start               int64 // the first second with values (Unix seconds)
	cols                [][]float64
	seen                []bool // which figures' metrics a sample had
}

func copyInto(dst, src map[string]float64) map[string]float64 {
	if dst == nil {
		dst = make(map[string]float64, len(src))
	}
	clear(dst)
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

func (s *secondsTracker) observe(ts int64, m map[string]float64) {
	if s.first == nil {
		s.first, s.firstTS = copyInto(nil, m), ts
		s.cols, s.seen = make([][]float64, len(figures)), make([]bool, len(figures))
	}
	if s.pend != nil && ts/1000 != s.pendTS/1000 {
		s.close()
	}
	s.pend, s.pendTS = copyInto(s.pend, m), ts
	for i, f := range figures {
		s.seen[i] = s.seen[i] || f.present(m)
	}
}

// close ends the open second: its values go to the columns, and its last
// sample becomes the anchor of the next.
func (s *secondsTracker) close() {
	if s.anchor == nil {
		s.anchor, s.pend = s.pend, s.anchor
		s.anchorTS = s.pendTS
		return
	}
	if len(s.cols[0]) == 0 {
		s.start = s.pendTS / 1000
	}
	at := int(s.pendTS/1000 - s.start)
	dt := float64(s.pendTS-s.anchorTS) / 1000
	for i, f := range figures {
		for len(s.cols[i]) < at {
			s.cols[i] = append(s.cols[i], math.NaN())
		}
		v, ok := f.value(s.anchor, s.pend, dt)
		if !ok {
			v = math.NaN()
		}
		s.cols[i] = append(s.cols[i], v)
	}
	s.anchor, s.pend = s.pend, s.anchor
	s.anchorTS = s.pendTS
}

// result ends the last second and returns the series; nil when the step
// had fewer than two samples.
func (s *secondsTracker) result() *record.ServerSeconds {
	if s.first == nil {
		return nil
	}
	if s.pend != nil {
		s.close()
		s.pend = nil
	}
	if len(s.cols[0]) == 0 {
		return nil
	}
	last := s.anchor
	dt := float64(s.anchorTS-s.firstTS) / 1000
	out := make([]*record.ServerSeries, len(figures))
	for i, f := range figures {
		if !s.seen[i] {
			continue // not in this server's serverStatus
		}
		ser := &record.ServerSeries{Values: s.cols[i]}
		var step float64
		ok := false
		if f.level {
			var sum float64
			n := 0
			for _, v := range ser.Values {
				if !math.IsNaN(v) {
					sum, n = sum+v, n+1
				}
			}
			step, ok = sum/float64(n), n > 0
		} else {
			step, ok = f.value(s.first, last, dt)
		}
		if ok {
			ser.Step = &step
		}
		out[i] = ser
	}
	return &record.ServerSeconds{Start: time.Unix(s.start, 0).UTC(), Ops: out[0], ReadLatency: out[1], WriteLatency: out[2],
		PagesRead: out[3], AppEvict: out[4], Cache: out[5], Dirty: out[6]}
}
