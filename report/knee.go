package report

import (
	"fmt"
	"slices"
	"strings"

	"wtd/engine/record"
	"wtd/engine/workload"
)

// kneeXLabel is the x axis of the charts against threads.
const kneeXLabel = "threads (log scale)"

// kneeCharts draws the thread sweeps of the runs (sweep.threads: workload
// steps labelled threads = N): throughput and p99 latency against the
// thread count, one line per step name, and names each sweep's knee by
// workload.Knee in the note. A thread count measured more than once counts
// with the median of its figures. Without a sweep of two counts or more
// the charts are empty (and left out).
func kneeCharts(recs []*record.Record) []Chart {
	ops := Chart{ID: "knee-ops", Title: "Throughput against threads", Unit: "ops/s", XLabel: kneeXLabel, XLog: true}
	p99 := Chart{ID: "knee-p99", Title: "p99 latency against threads", Unit: "ms", XLabel: kneeXLabel, XLog: true}
	var notes []string
	for _, rec := range recs {
		for _, sw := range sweeps(rec) {
			var x, y, q []float64
			for _, p := range sw.points {
				x, y, q = append(x, float64(p.Threads)), append(y, p.OpsPerSec), append(q, p.P99Micros/1000)
			}
			ops.Runs = append(ops.Runs, RunData{Run: rec.Run.ID, X: x, Series: []Series{{Label: sw.name, Y: y}}})
			p99.Runs = append(p99.Runs, RunData{Run: rec.Run.ID, X: x, Series: []Series{{Label: sw.name, Y: q}}})
			knee, ok, reason, err := workload.Knee(sw.points)
			switch {
			case err != nil:
				reason = err.Error()
			case ok:
				reason = fmt.Sprintf("knee at %d threads: %s", knee, reason)
			default:
				reason = "no knee: " + reason
			}
			notes = append(notes, fmt.Sprintf("run %d, %s: %s", rec.Run.ID, sw.name, reason))
		}
	}
	rule := fmt.Sprintf("The knee is the smallest thread count k such that every larger count has less than %.0f%% more throughput per doubling of the threads from k and a higher p99 than k. ", 100*workload.KneeGrowth)
	ops.Note = rule + strings.Join(notes, "; ")
	p99.Note = ops.Note
	return []Chart{ops, p99}
}

// sweep is one step name's points of a run, by thread count.
type sweep struct {
	name   string
	points []workload.SweepPoint
}

// sweeps returns the run's workload steps labelled threads, by step name,
// those with two thread counts or more.
func sweeps(rec *record.Record) []sweep {
	type figures struct{ ops, p50, p99 []float64 }
	by := map[string]map[int]*figures{}
	var names []string
	for _, s := range rec.Steps {
		n, ok := s.Labels["threads"].(float64)
		m := record.MeasuresOf(s)
		if !ok || m.OpsPerSec == nil || m.P99Micros == nil || m.Load || s.Status != record.StatusOK || n < 1 {
			continue
		}
		if by[s.Name] == nil {
			by[s.Name] = map[int]*figures{}
			names = append(names, s.Name)
		}
		f := by[s.Name][int(n)]
		if f == nil {
			f = &figures{}
			by[s.Name][int(n)] = f
		}
		f.ops, f.p50, f.p99 = append(f.ops, *m.OpsPerSec), append(f.p50, *m.P50Micros), append(f.p99, *m.P99Micros)
	}
	var out []sweep
	for _, name := range names {
		if len(by[name]) < 2 {
			continue
		}
		sw := sweep{name: name}
		for n, f := range by[name] {
			med := func(v []float64) float64 { return record.Summarise(v).Median }
			sw.points = append(sw.points, workload.SweepPoint{Threads: n, OpsPerSec: med(f.ops), P50Micros: med(f.p50), P99Micros: med(f.p99)})
		}
		slices.SortFunc(sw.points, func(a, b workload.SweepPoint) int { return a.Threads - b.Threads })
		out = append(out, sw)
	}
	return out
}
