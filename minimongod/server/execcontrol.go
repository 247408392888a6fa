package server

import (
	"math"
	"runtime"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Concurrency adjustment algorithms
// (executionControlConcurrencyAdjustmentAlgorithm).
const (
	algoFixed   = "fixedConcurrentTransactions"
	algoProbing = "throughputProbing"
)

// Throughput probing constants: mongod's throughputProbing* parameters at
// their defaults (throughput_probing.idl). minConcurrency is 5, not
// mongod's 4, so that probing never goes below what
// executionControlConcurrentRead/WriteTransactions accept.
const (
	probeMinConcurrency = 5
	probeStepMultiple   = 0.1
	probeReadWriteRatio = 0.5
	probeMovingAvgWght  = 0.2
)

// execControl is admission control: the read and write ticket pools and
// the concurrency adjustment that sizes them.
type execControl struct {
	read, write *ticketHolder

	mu        sync.Mutex
	algorithm string
	maxRead   int // executionControlConcurrentReadTransactions
	maxWrite  int
	interval  time.Duration
	probe     *throughputProbe // nil while fixed
}

func newExecControl() *execControl {
	return &execControl{read: newTicketHolder(128), write: newTicketHolder(128),
		algorithm: algoFixed, maxRead: 128, maxWrite: 128, interval: 100 * time.Millisecond}
}

func (x *execControl) holder(k ticketKind) *ticketHolder {
	if k == writeTicket {
		return x.write
	}
	return x.read
}

// setLimit sets executionControlConcurrent<kind>Transactions: the pool
// size with fixed concurrency, the probing maximum with throughputProbing.
func (x *execControl) setLimit(k ticketKind, n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if k == writeTicket {
		x.maxWrite = n
	} else {
		x.maxRead = n
	}
	if x.probe == nil {
		x.holder(k).resize(n)
		return
	}
	if x.holder(k).outof() > n {
		x.holder(k).resize(n)
	}
}

// limits returns the configured maxima.
func (x *execControl) limits() (read, write int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.maxRead, x.maxWrite
}

// setAlgorithm switches between fixed pools and throughput probing.
func (x *execControl) setAlgorithm(name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if name == x.algorithm {
		return
	}
	x.algorithm = name
	if name == algoFixed {
		x.probe = nil
		x.read.resize(x.maxRead)
		x.write.resize(x.maxWrite)
		return
	}
	x.probe = newThroughputProbe(runtime.NumCPU(), x.read, x.write, x.maxRead, x.maxWrite)
}

func (x *execControl) setInterval(d time.Duration) {
	x.mu.Lock()
	x.interval = d
	x.mu.Unlock()
}

func (x *execControl) settings() (algorithm string, interval time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.algorithm, x.interval
}

// adjust runs one probing interval (nothing with fixed concurrency).
func (x *execControl) adjust() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.probe != nil {
		x.probe.maxRead, x.probe.maxWrite = x.maxRead, x.maxWrite
		x.probe.run(time.Now())
	}
}

// probeStats returns the probing counters (zero while fixed).
func (x *execControl) probeStats() probeStats {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.probe == nil {
		return probeStats{}
	}
	return x.probe.stats
}

// adjustLoop runs the concurrency adjustment every
// executionControlConcurrencyAdjustmentIntervalMillis until stop closes.
func (x *execControl) adjustLoop(stop <-chan struct{}) {
	for {
		_, interval := x.settings()
		t := time.NewTimer(interval)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		x.adjust()
	}
}

// probeState is where throughput probing is in its cycle.
type probeState int

const (
	probeStable probeState = iota
	probeUp
	probeDown
)

// probeStats are mongod's queues.execution.monitor counters.
type probeStats struct {
	timesDecreased, timesIncreased             int64
	totalAmountDecreased, totalAmountIncreased int64
}

// throughputProbe is mongod's ThroughputProbing monitor: each interval it
// measures throughput (tickets released per microsecond) and, from the
// stable state, probes up when a pool was exhausted or down when usage
// stayed above the minimum; a probe that raised throughput moves the
// stable concurrency (an exponential moving average), any probe then
// returns to stable.
type throughputProbe struct {
	read, write       *ticketHolder
	maxRead, maxWrite int

	state             probeState
	stableConcurrency float64 // read + write
	stableThroughput  float64
	prevFinished      int64 // -1 before the first interval
	last              time.Time
	stats             probeStats
}

// newThroughputProbe starts at twice the core count (read + write),
// clamped to [2*min, read max + write max], as mongod does with
// throughputProbingInitialConcurrency 0.
func newThroughputProbe(cores int, read, write *ticketHolder, maxRead, maxWrite int) *throughputProbe {
	p := &throughputProbe{read: read, write: write, maxRead: maxRead, maxWrite: maxWrite, prevFinished: -1}
	p.stableConcurrency = float64(min(max(cores*2, 2*probeMinConcurrency), maxRead+maxWrite))
	p.resetConcurrency()
	return p
}

func (p *throughputProbe) finished() int64 { return p.read.finished() + p.write.finished() }

// run is one interval.
func (p *throughputProbe) run(now time.Time) {
	done := p.finished()
	if p.prevFinished < 0 {
		p.prevFinished, p.last = done, now
		return
	}
	elapsed := float64(now.Sub(p.last).Microseconds())
	if elapsed <= 0 {
		return
	}
	throughput := float64(done-p.prevFinished) / elapsed
	switch p.state {
	case probeStable:
		p.probeStable(throughput)
	case probeUp, probeDown:
		p.probeResult(throughput)
	}
	p.prevFinished, p.last = p.finished(), now
}

func (p *throughputProbe) probeStable(throughput float64) {
	p.stableThroughput = throughput
	readTotal, writeTotal := p.read.outof(), p.write.outof()
	readPeak, writePeak := p.read.getAndResetPeakUsed(), p.write.getAndResetPeakUsed()
	switch {
	case (readTotal < p.maxRead && readPeak >= readTotal) || (writeTotal < p.maxWrite && writePeak >= writeTotal):
		p.state = probeUp
		p.step(1+probeStepMultiple, 1)
	case readPeak > probeMinConcurrency || writePeak > probeMinConcurrency:
		p.state = probeDown
		p.step(1-probeStepMultiple, -1)
	}
}

// probeResult ends a probe: a throughput gain moves the stable
// concurrency toward the probed one.
func (p *throughputProbe) probeResult(throughput float64) {
	if throughput > p.stableThroughput {
		concurrency := float64(p.read.outof() + p.write.outof())
		next := concurrency*probeMovingAvgWght + p.stableConcurrency*(1-probeMovingAvgWght)
		if p.state == probeUp {
			p.stats.timesIncreased++
			p.stats.totalAmountIncreased += int64(next - p.stableConcurrency)
		} else {
			p.stats.timesDecreased++
			p.stats.totalAmountDecreased += int64(p.stableConcurrency - next)
		}
		p.stableThroughput, p.stableConcurrency = throughput, next
	}
	p.state = probeStable
	p.resetConcurrency()
}

// concurrencies returns the pool sizes for stable concurrency times step.
func (p *throughputProbe) concurrencies(step float64) (read, write int) {
	clamp := func(pct float64, hi int) int {
		n := int(math.Round(p.stableConcurrency * pct * step))
		return min(max(n, probeMinConcurrency), max(hi, probeMinConcurrency))
	}
	return clamp(probeReadWriteRatio, p.maxRead), clamp(1-probeReadWriteRatio, p.maxWrite)
}

func (p *throughputProbe) resetConcurrency() {
	r, w := p.concurrencies(1)
	p.read.resize(r)
	p.write.resize(w)
}

// step resizes for a probe; when rounding leaves a pool unchanged it moves
// by one ticket (dir), within the bounds.
func (p *throughputProbe) step(mult float64, dir int) {
	r, w := p.concurrencies(mult)
	if r == p.read.outof() {
		r = min(max(r+dir, probeMinConcurrency), max(p.maxRead, probeMinConcurrency))
	}
	if w == p.write.outof() {
		w = min(max(w+dir, probeMinConcurrency), max(p.maxWrite, probeMinConcurrency))
	}
	p.read.resize(r)
	p.write.resize(w)
}

// appendMonitor appends queues.execution.monitor.
func (s probeStats) appendMonitor(d []byte) []byte {
	d = bsoncore.AppendInt64Element(d, "timesDecreased", s.timesDecreased)
	d = bsoncore.AppendInt64Element(d, "timesIncreased", s.timesIncreased)
	d = bsoncore.AppendInt64Element(d, "totalAmountDecreased", s.totalAmountDecreased)
	return bsoncore.AppendInt64Element(d, "totalAmountIncreased", s.totalAmountIncreased)
}
