package engine

import "sync"

// Threshold is a condition a run must meet at its end (threshold{} in a
// playbook): a measure of the steps named Step at most Max, at least Min,
// or within VsBaseline ("+10%", "-5%") of the same steps of the previous
// ok run of the playbook with the same parameters. compare checks
// it; a threshold that does not hold fails the run.
type Threshold struct {
	Step    string   `json:"step"`
	Measure string   `json:"measure"`
	Max     *float64 `json:"max,omitempty"`
	Min     *float64 `json:"min,omitempty"`
	// VsBaseline is a signed percentage: "+10%" allows up to 10% more
	// than the baseline's value, "-10%" down to 10% less.
	VsBaseline string `json:"vs_baseline,omitempty"`
}

// thresholds are the thresholds a run's playbook declared.
type thresholds struct {
	mu   sync.Mutex
	list []Threshold
}

// AddThreshold declares a threshold the run is checked against at its end
// (checked for its form by the caller: compare.CheckThreshold).
func (r *Run) AddThreshold(t Threshold) {
	r.thresholds.mu.Lock()
	defer r.thresholds.mu.Unlock()
	r.thresholds.list = append(r.thresholds.list, t)
}

// Thresholds returns the thresholds the run declared, in order.
func (r *Run) Thresholds() []Threshold {
	r.thresholds.mu.Lock()
	defer r.thresholds.mu.Unlock()
	return append([]Threshold(nil), r.thresholds.list...)
}
