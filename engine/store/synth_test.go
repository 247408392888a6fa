package store

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// serverStatusLike produces a serverStatus-like stream of flattened metric
// maps: nkeys dotted names, mostly integral counters of all magnitudes, some
// gauges and fractional values; each call to next moves about changeFrac of
// them, counters by small increments.
type serverStatusLike struct {
	rng        *rand.Rand
	names      []string
	vals       []float64
	kinds      []byte // 'c' counter, 'g' gauge, 'f' fraction
	changeFrac float64
	m          map[string]float64
}

var sections = []string{
	"wiredTiger.cache", "wiredTiger.block-manager", "wiredTiger.connection", "wiredTiger.cursor",
	"wiredTiger.transaction", "wiredTiger.log", "wiredTiger.concurrentTransactions.read",
	"opcounters", "opLatencies.reads", "network", "mem", "metrics.document", "metrics.operation",
	"metrics.query", "metrics.repl.network", "tcmalloc.generic", "tcmalloc.tcmalloc", "globalLock.currentQueue",
	"locks.Global.acquireCount", "extra_info", "connections", "asserts", "metrics.commands.find",
}

func newServerStatusLike(seed uint64, nkeys int, changeFrac float64) *serverStatusLike {
	g := &serverStatusLike{rng: rand.New(rand.NewPCG(seed, 42)), changeFrac: changeFrac}
	for i := range nkeys {
		name := fmt.Sprintf("%s.field %d of the section", sections[i%len(sections)], i/len(sections))
		var v float64
		kind := byte('c')
		switch r := g.rng.IntN(100); {
		case r < 40:
			v = float64(g.rng.Int64N(1e10))
		case r < 70:
			v = float64(g.rng.IntN(1000))
		case r < 85:
			v = 0
		case r < 95:
			kind, v = 'g', float64(g.rng.IntN(1<<20))
		default:
			kind, v = 'f', g.rng.Float64()*100
		}
		g.names, g.vals, g.kinds = append(g.names, name), append(g.vals, v), append(g.kinds, kind)
	}
	return g
}

// next advances the stream and returns its map, which is reused by the next
// call (AddSample copies it).
func (g *serverStatusLike) next() map[string]float64 {
	for i := range g.vals {
		if g.rng.Float64() >= g.changeFrac {
			continue
		}
		switch g.kinds[i] {
		case 'c':
			g.vals[i] += math.Floor(g.rng.ExpFloat64() * 200)
		case 'g':
			g.vals[i] = math.Max(0, g.vals[i]+float64(g.rng.IntN(2001)-1000))
		default:
			g.vals[i] = g.rng.Float64() * 100
		}
	}
	if g.m == nil {
		g.m = make(map[string]float64, len(g.names))
	}
	for i, n := range g.names {
		g.m[n] = g.vals[i]
	}
	return g.m
}
