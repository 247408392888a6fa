package record

import (
	"encoding/json"
	"math"
	"time"
)

// ServerSeconds are a step's per-second figures of a server that wtd did
// not load itself (an imported run's): what its serverStatus counters did
// in each second, as wtd's own workload steps record the operations they
// ran in each second. Value i of every series is second Start+i. A series
// that is nil was not in the server's serverStatus (an old version lacks
// opLatencies); within a series a null is a second that was not measured
// (no sample in it, or for a latency, no operation).
type ServerSeconds struct {
	// Start is the first second (the time of the sample ending it, to the
	// second).
	Start time.Time `json:"start"`
	// Ops are operations per second: all opcounters (insert, query,
	// update, delete, getmore, command) together.
	Ops *ServerSeries `json:"ops"`
	// ReadLatency and WriteLatency are the mean latency of a read and of
	// a write finished in the second (opLatencies, microseconds).
	ReadLatency  *ServerSeries `json:"read_latency_micros"`
	WriteLatency *ServerSeries `json:"write_latency_micros"`
	// PagesRead are pages read into the cache per second.
	PagesRead *ServerSeries `json:"pages_read"`
	// AppEvict is the time application threads spent evicting, in
	// microseconds per second.
	AppEvict *ServerSeries `json:"app_evict_micros"`
	// Cache and Dirty are the bytes in the cache and the dirty bytes at
	// the end of each second.
	Cache *ServerSeries `json:"cache_bytes"`
	Dirty *ServerSeries `json:"dirty_bytes"`
}

// ServerSeries is one figure of a step: over the whole step (Step: the
// rate over all its seconds, the mean latency of all its operations, the
// mean level) and second by second (Values, NaN where not measured, null
// in JSON).
type ServerSeries struct {
	Step   *float64  `json:"step"`
	Values []float64 `json:"-"`
}

type serverSeriesJSON struct {
	Step   *float64   `json:"step"`
	Values []*float64 `json:"values"`
}

// MarshalJSON writes the values with null for NaN, rounded to what they
// mean (a thousandth of an operation, a tenth of a microsecond, a byte).
func (s ServerSeries) MarshalJSON() ([]byte, error) {
	out := serverSeriesJSON{Step: s.Step, Values: make([]*float64, len(s.Values))}
	for i, v := range s.Values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			r := math.Round(v*1000) / 1000
			out.Values[i] = &r
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *ServerSeries) UnmarshalJSON(b []byte) error {
	var in serverSeriesJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	s.Step, s.Values = in.Step, make([]float64, len(in.Values))
	for i, v := range in.Values {
		if v == nil {
			s.Values[i] = math.NaN()
		} else {
			s.Values[i] = *v
		}
	}
	return nil
}

// StepValue is the series' figure over the step, nil when s is nil or it
// was not measured.
func (s *ServerSeries) StepValue() *float64 {
	if s == nil {
		return nil
	}
	return s.Step
}

// PerSecond is the series' measured seconds (NaNs left out), nil when s is
// nil.
func (s *ServerSeries) PerSecond() []float64 {
	if s == nil {
		return nil
	}
	out := make([]float64, 0, len(s.Values))
	for _, v := range s.Values {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}
