package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// hotspot draws keys as YCSB's HotspotIntegerGenerator does: with
// probability ops uniformly from the hot set [0, hot), else uniformly from
// the cold set [hot, hot+cold).
type hotspot struct {
	hot, cold uint64
	ops       float64
}

// newHotspot returns a hotspot over items keys whose first fraction (0:
// DefaultHotFraction) gets ops (0: DefaultHotOps) of the draws. The hot set
// is fraction*items keys rounded down, as YCSB's, but at least one key
// (YCSB's generator fails on an empty one).
func newHotspot(items uint64, fraction, ops float64) (*hotspot, error) {
	if fraction == 0 {
		fraction = DefaultHotFraction
	}
	if ops == 0 {
		ops = DefaultHotOps
	}
	if !(fraction > 0 && fraction <= 1) {
		return nil, fmt.Errorf("hot_fraction %v out of range (0, 1]", fraction)
	}
	if !(ops > 0 && ops <= 1) {
		return nil, fmt.Errorf("hot_ops %v out of range (0, 1]", ops)
	}
	hot := min(items, max(1, uint64(fraction*float64(items))))
	return &hotspot{hot: hot, cold: items - hot, ops: ops}, nil
}

func (h *hotspot) pick(r *rand.PCG) uint64 {
	if h.cold == 0 || unitFloat(r.Uint64()) < h.ops {
		return boundedUint64(r.Uint64(), h.hot)
	}
	return h.hot + boundedUint64(r.Uint64(), h.cold)
}

// ackWindow bounds how far past the newest acknowledged insert other
// inserts may be acknowledged: each workload thread has at most one insert
// in flight, and there are at most MaxThreads of them.
const ackWindow = 4 * MaxThreads

// latestKeys is YCSB's "latest" distribution (its SkewedLatestGenerator):
// rank r, drawn from the plain zipfian over the key count, picks the key
// newest - r, so the newest key is the most popular and popularity follows
// the inserts. YCSB's count is the newest _id itself, one short of the
// keys, so it never reads _id 0; here every key can be drawn (the shares
// differ from YCSB's by less than one part in the key count). As the count
// grows, YCSB updates eta with the new zeta but the first count; here eta
// follows the count, as Gray's method has it. newest is the highest
// _id below which every inserted _id has been acknowledged (failed inserts
// count as acknowledged, as in YCSB), so a read never asks for a document
// whose insert is still in flight.
type latestKeys struct {
	state atomic.Pointer[latestState] // what pick reads

	mu      sync.Mutex
	grow    bool // the key count grows with each acknowledged insert
	n       uint64
	zetan   float64
	newest  int64
	pending [ackWindow]bool // acknowledged inserts above newest, by _id mod ackWindow
}

// latestState is one consistent view: the newest key and the zipfian over
// the key count at that point.
type latestState struct {
	newest int64
	z      *zipfian
}

func newLatestKeys(newest int64, items uint64, grow bool) *latestKeys {
	l := &latestKeys{grow: grow, n: items, zetan: zeta(items, zipfianTheta), newest: newest}
	l.publish()
	return l
}

func (l *latestKeys) publish() {
	l.state.Store(&latestState{newest: l.newest, z: zipfianWithZeta(l.n, zipfianTheta, l.zetan)})
}

func (l *latestKeys) pick(r *rand.PCG) int64 {
	s := l.state.Load()
	return s.newest - int64(s.z.rank(unitFloat(r.Uint64())))
}

// ack records that the insert of id has finished (succeeded or failed).
// The newest key moves up over every contiguous acknowledged _id.
func (l *latestKeys) ack(id int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id <= l.newest || id-l.newest > ackWindow {
		return // not an insert this distribution follows
	}
	l.pending[id%ackWindow] = true
	moved := false
	for next := l.newest + 1; l.pending[next%ackWindow]; next++ {
		l.pending[next%ackWindow] = false
		l.newest = next
		if l.grow {
			l.n++
			l.zetan += math.Pow(float64(l.n), -zipfianTheta)
		}
		moved = true
	}
	if moved {
		l.publish()
	}
}

// current returns the newest key and the key count.
func (l *latestKeys) current() (newest int64, items uint64) {
	s := l.state.Load()
	return s.newest, s.z.items
}
