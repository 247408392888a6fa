package workload

import (
	"cmp"
	"math"
	"time"
)

// CheckLoadSpec fills in a load's defaults and checks every field as Load
// does, without a server: wtd check finds a bad m:load before anything is
// loaded.
func CheckLoadSpec(spec LoadSpec) (LoadSpec, error) {
	s, _, _, err := checkLoadSpec(spec)
	return s, err
}

// UnrunLoadResult is the result a load of the checked spec would have if
// every document were inserted, with no time measured: the shape a
// playbook sees from m:load, for wtd check.
func UnrunLoadResult(spec LoadSpec) LoadResult {
	return LoadResult{Docs: spec.Docs, Bytes: spec.Docs * int64(spec.DocBytes),
		Batch: OpStats{Count: int64(math.Ceil(float64(spec.Docs) / float64(max(spec.Batch, 1))))}}
}

// Unrun returns the result of the prepared workload's shape with nothing
// measured: an entry in Ops for each operation of its mix, the total, an
// empty series, the rate, warm-up and watched fields it asks for, all
// zero; NextInsertID is the first insert's _id. It is what wtd check hands
// a playbook for m:workload, which it never runs.
func (p *Prepared) Unrun() Result {
	w := p.w
	res := Result{
		Ops:          map[string]OpStats{},
		Series:       []SecondPoint{},
		NextInsertID: w.spec.InsertStartID,
		Workload:     w.spec.Workload,
		Mix:          w.spec.Mix,
		Distribution: cmp.Or(w.spec.Distribution, DistUniform),
	}
	for op := range numOps {
		if w.used[op] {
			res.Ops[opNames[op]] = OpStats{}
		}
	}
	if w.sched != nil {
		res.Rate = &RateResult{}
		res.Total.Service = &LatencyStats{}
		for name, st := range res.Ops {
			st.Service = &LatencyStats{}
			res.Ops[name] = st
		}
	}
	if w.hasWarmup() {
		res.Warmup = w.warmupResult(nil, 0, 0)
	}
	if len(w.spec.Watch) > 0 {
		res.Watch = map[string]WatchStats{}
		for _, name := range w.spec.Watch {
			res.Watch[name] = WatchStats{}
		}
	}
	return res
}

// Bound is how long the prepared workload lasts at most, its warm-up
// included (0 when only a number of operations bounds it).
func (p *Prepared) Bound() time.Duration {
	if s := p.w.spec; s.Duration > 0 {
		return s.Duration + s.Warmup
	}
	return 0
}
