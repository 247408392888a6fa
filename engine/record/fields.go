package record

import (
	"fmt"
	"math"
	"time"
)

// Field is one named figure of a report.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Repetitions returns, for each step, the ops/s of the steps that repeat it
// (same RepetitionKey), in run order.
func Repetitions(steps []StepRecord) map[string][]float64 {
	out := map[string][]float64{}
	for _, st := range steps {
		if m := MeasuresOf(st); m.OpsPerSec != nil && st.Status == StatusOK {
			k := RepetitionKey(st)
			out[k] = append(out[k], *m.OpsPerSec)
		}
	}
	return out
}

// ProvenanceFields words the eight figures a measured result must state
// (the measuring discipline wtd follows): data size and count; cache size
// and memory; data/memory; warm-up; how caches were cleared; Cached after
// clearing; repetitions with min/median/max; failed operations and
// swapping. reps are the ops/s of the step's repetitions (Repetitions);
// swap is the change of used swap over the step, nil when not sampled.
// Figures that were not measured read "–".
func ProvenanceFields(st StepRecord, reps []float64, swap *float64) []Field {
	p := st.Provenance
	if p == nil {
		p = &Provenance{}
	}
	i64 := func(v *int64, format string, div float64) string {
		if v == nil {
			return Dash
		}
		return fmt.Sprintf(format, float64(*v)/div)
	}
	u64 := func(v *uint64, format string, div float64) string {
		if v == nil {
			return Dash
		}
		return fmt.Sprintf(format, float64(*v)/div)
	}
	cleared := p.Cleared
	switch {
	case cleared == "":
		cleared = Dash
	case p.DropTried && !p.Dropped:
		cleared += " (drop_caches did not happen: " + p.DropReason + ")"
	case p.Dropped:
		cleared += " (confirmed)"
	}
	warm := p.Warmup
	if warm == "" {
		warm = Dash
	}
	rep := Dash
	switch s := Summarise(reps); {
	case s.N == 1:
		rep = "1 (no repetitions)"
	case s.N > 1:
		rep = fmt.Sprintf("%d; ops/s min %.0f, median %.0f, max %.0f", s.N, s.Min, s.Median, s.Max)
	}
	failed := Dash
	if m := MeasuresOf(st); m.Errors != nil {
		failed = fmt.Sprintf("%.0f failed", *m.Errors)
	}
	swapping := "swap " + Dash
	if swap != nil {
		swapping = fmt.Sprintf("swap used %+.1f MB", *swap/(1<<20))
	}
	return []Field{
		{"data", i64(p.DatasetBytes, "%.1f MB", 1e6) + ", " + i64(p.Documents, "%.0f documents", 1) + " (" + orDashStr(p.NS) + ")"},
		{"cache / memory", i64(p.CacheBytes, "%.0f MB", 1<<20) + " cache, " + u64(p.MemoryBytes, "%.1f GB", 1<<30) + " memory"},
		{"data / memory", ratio(p.DatasetMemory)},
		{"warm-up", warm},
		{"caches cleared", cleared},
		{"Cached after", u64(p.CachedAfter, "%.1f MB", 1<<20)},
		{"repetitions", rep},
		{"failed ops, swapping", failed + "; " + swapping},
	}
}

func ratio(v *float64) string {
	if v == nil {
		return Dash
	}
	return fmt.Sprintf("%.3f", *v)
}

func orDashStr(s string) string {
	if s == "" {
		return Dash
	}
	return s
}

// WindowChange returns the change of a sampled value over [from, to]: the
// last sample in the window minus the last one at or before from (the first
// in the window when none is before). nil when fewer than two samples
// carry the value.
func WindowChange(ts []time.Time, vals []float64, from, to time.Time) *float64 {
	first, last := -1, -1
	for i, t := range ts {
		if math.IsNaN(vals[i]) || t.After(to) {
			continue
		}
		if !t.After(from) || first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 || last <= first {
		return nil
	}
	v := vals[last] - vals[first]
	return &v
}

// Rates turns a counter's samples into per-second rates: NaN for the first
// sample and where either end is missing; a counter that went down was
// reset (its server restarted) and counts again from zero.
func Rates(ts []time.Time, vals []float64) []float64 {
	out := make([]float64, len(vals))
	for i := range vals {
		out[i] = math.NaN()
		if i == 0 || math.IsNaN(vals[i]) || math.IsNaN(vals[i-1]) {
			continue
		}
		dt := ts[i].Sub(ts[i-1]).Seconds()
		if dt <= 0 {
			continue
		}
		d := vals[i] - vals[i-1]
		if d < 0 {
			d = vals[i]
		}
		out[i] = d / dt
	}
	return out
}
