package record

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"wtd/engine/store"
	"wtd/engine/workload"
)

// StepFromStore turns a recorded step back into the StepRecord a run keeps,
// so that tables and reports are redrawn from the database alone. Result is
// the decoded JSON of the step's result (maps and float64s); fields that
// were never recorded stay nil.
func StepFromStore(s store.Step) StepRecord {
	rec := StepRecord{ID: s.ID, Seq: s.Seq, Name: s.Name, Labels: s.Labels, Start: s.StartedAt, End: s.EndedAt,
		Status: s.Status, Error: s.Error}
	if len(s.Settings) > 0 && string(s.Settings) != "null" {
		var st Settings
		if json.Unmarshal(s.Settings, &st) == nil {
			rec.Settings = &st
		}
	}
	if len(s.Provenance) > 0 && string(s.Provenance) != "null" {
		var p Provenance
		if json.Unmarshal(s.Provenance, &p) == nil {
			rec.Provenance = &p
		}
	}
	if len(s.Results) > 0 {
		var res struct {
			Result any            `json:"result"`
			Server *ServerDeltas  `json:"server"`
			Host   *HostLoad      `json:"host_load"`
			Secs   *ServerSeconds `json:"server_seconds"`
		}
		if json.Unmarshal(s.Results, &res) == nil {
			rec.Result, rec.Server, rec.Host, rec.ServerSeconds = res.Result, res.Server, res.Host, res.Secs
		}
	}
	return rec
}

// StepsFromStore converts a run's recorded steps.
func StepsFromStore(steps []store.Step) []StepRecord {
	out := make([]StepRecord, len(steps))
	for i, s := range steps {
		out[i] = StepFromStore(s)
	}
	return out
}

// RepetitionKey names what repeats of a step share: its name and its
// labels other than round. Steps with the same key are repetitions.
func RepetitionKey(st StepRecord) string {
	var b strings.Builder
	b.WriteString(st.Name)
	for _, k := range sortedLabelKeys(st.Labels) {
		if k == "round" {
			continue
		}
		fmt.Fprintf(&b, " %s=%v", k, st.Labels[k])
	}
	return b.String()
}

// Title names a recorded step as the run's log does: "reads (cacheSizeGB=0.25 round=1)".
func (st StepRecord) Title() string {
	return StepTitle(st.Name, st.Labels)
}

// ImportedReason is the provenance reason of every step of an imported run
// (wtd import).
const ImportedReason = "imported: wtd did not control the caches"

// ChangedLabel is the label an imported step carries when its server's
// settings changed at its start: what changed ("cacheSizeGB=50").
const ChangedLabel = "changed"

// Imported reports whether the step is an imported run's.
func (st StepRecord) Imported() bool {
	return st.Provenance != nil && st.Provenance.Reason == ImportedReason
}

// MatchTitle is what matches a step across runs (compare, history): its
// title, but for an imported step without the label saying what changed at
// its start, so that the same server's stretch before a change and after it
// are one step whose measures can be followed.
func (st StepRecord) MatchTitle() string {
	if _, ok := st.Labels[ChangedLabel]; !ok || !st.Imported() {
		return st.Title()
	}
	labels := map[string]any{}
	for k, v := range st.Labels {
		if k != ChangedLabel {
			labels[k] = v
		}
	}
	return StepTitle(st.Name, labels)
}

// Measures are the figures of a step that results are compared on. A nil
// field was not measured (or does not apply: a load has no per-operation
// latency).
type Measures struct {
	OpsPerSec      *float64 // operations (documents for a load) per second
	P50Micros      *float64 // per operation; per batch for a load
	P99Micros      *float64
	Errors         *float64 // failed operations
	PagesReadPerOp *float64
	CachePeak      *float64 // bytes
	DirtyPeak      *float64 // bytes
	AppEvictMicros *float64 // time application threads spent evicting
	Load           bool
	// The figures of a step over a server wtd did not load (an imported
	// run's, from its ServerSeconds): the mean latency of a read and of a
	// write (microseconds), pages read into the cache and application
	// threads' eviction time (microseconds) per second, and the mean bytes
	// in the cache and dirty.
	ReadLatencyMicros, WriteLatencyMicros *float64
	PagesReadPerSec, AppEvictMicrosPerSec *float64
	CacheMean, DirtyMean                  *float64
}

// MeasuresOf returns a step's measures.
func MeasuresOf(st StepRecord) Measures {
	var m Measures
	n := numbersOf(st)
	if n.hasOps {
		m.OpsPerSec, m.Load = ptr(n.opsPerSec), n.load
		if n.ops > 0 {
			// Latencies are of successes: with none, none was measured
			// (the result's zeros are not a latency).
			m.P50Micros, m.P99Micros = ptr(n.p50), ptr(n.p99)
		}
		if e, ok := errorsOf(st.Result); ok {
			m.Errors = &e
		}
	}
	if ss := st.ServerSeconds; ss != nil && !n.hasOps {
		m.OpsPerSec = ss.Ops.StepValue()
		if st.Server != nil && m.OpsPerSec != nil {
			n.hasOps = true
			for _, c := range st.Server.Opcounters {
				n.ops += c
			}
		}
		m.ReadLatencyMicros, m.WriteLatencyMicros = ss.ReadLatency.StepValue(), ss.WriteLatency.StepValue()
		m.PagesReadPerSec, m.AppEvictMicrosPerSec = ss.PagesRead.StepValue(), ss.AppEvict.StepValue()
		m.CacheMean, m.DirtyMean = ss.Cache.StepValue(), ss.Dirty.StepValue()
	}
	if d := st.Server; d != nil {
		m.CachePeak, m.DirtyPeak, m.AppEvictMicros = d.CacheUsedPeak, d.DirtyPeak, d.AppEvictMicros
		// Pages read per operation: the pages the step read into the
		// cache over all its operations (documents, for a load), the one
		// meaning of "pages read/op" wherever wtd shows it.
		if d.PagesRead != nil && n.hasOps && n.ops > 0 {
			m.PagesReadPerOp = ptr(*d.PagesRead / n.ops)
		}
	}
	return m
}

func ptr(v float64) *float64 { return &v }

// errorsOf returns the failed operations of a step's result.
func errorsOf(result any) (float64, bool) {
	switch r := result.(type) {
	case workload.Result:
		return float64(r.Total.Errors), true
	case *workload.Result:
		return float64(r.Total.Errors), true
	case workload.LoadResult:
		return float64(r.Errors), true
	case *workload.LoadResult:
		return float64(r.Errors), true
	case map[string]any:
		if t, ok := r["total"].(map[string]any); ok {
			e, ok := t["errors"].(float64)
			return e, ok
		}
		if e, ok := r["errors"].(float64); ok {
			return e, true
		}
	}
	return 0, false
}

// SecondSeries returns a workload step's per-second series: operations
// finished in each second and the p99 latency of that second (microseconds;
// NaN when none finished), all operation types together (the p99 is the
// highest of the types'). A step without a series gives nil.
func SecondSeries(st StepRecord) (ops, p99 []float64) { return secondSeries(st, false) }

// MeasuredSecondSeries is SecondSeries without the warm-up's seconds: the
// seconds a step's summary figures come from.
func MeasuredSecondSeries(st StepRecord) (ops, p99 []float64) { return secondSeries(st, true) }

// SecondPoints are a workload step's seconds as it recorded them (nil for
// a step that is not a workload).
func SecondPoints(st StepRecord) []workload.SecondPoint {
	var points []workload.SecondPoint
	switch r := st.Result.(type) {
	case workload.Result:
		points = r.Series
	case *workload.Result:
		points = r.Series
	case map[string]any:
		b, err := json.Marshal(r["series"])
		if err != nil || json.Unmarshal(b, &points) != nil {
			return nil
		}
	}
	return points
}

func secondSeries(st StepRecord, measuredOnly bool) (ops, p99 []float64) {
	for _, p := range SecondPoints(st) {
		if measuredOnly && p.Warmup {
			continue
		}
		var n float64
		q := -1.0
		for op, c := range p.Counts {
			n += float64(c)
			// A type without a p99 had no success in the second; one
			// recorded with a count of 0 (as older runs did) is not one.
			if v, ok := p.P99Micros[op]; ok && c > 0 && v > q {
				q = v
			}
		}
		ops = append(ops, n)
		if q < 0 {
			p99 = append(p99, nan())
		} else {
			p99 = append(p99, q)
		}
	}
	return ops, p99
}

func nan() float64 { return math.NaN() }

// StepTitle names a step by its name and labels as the run's log does:
// "reads (cacheSizeGB=0.25 round=1)".
func StepTitle(name string, labels map[string]any) string {
	if len(labels) == 0 {
		return name
	}
	parts := []string{}
	for _, k := range sortedLabelKeys(labels) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, labels[k]))
	}
	return name + " (" + strings.Join(parts, " ") + ")"
}
