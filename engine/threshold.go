package engine

import (
	"sync"
	"wtd/engine/record"
)

// thresholds are the thresholds a run's playbook declared.
type thresholds struct {
	mu   sync.Mutex
	list []record.Threshold
}

// AddThreshold declares a threshold the run is checked against at its end
// (checked for its form by the caller: compare.CheckThreshold).
func (r *Run) AddThreshold(t record.Threshold) {
	r.thresholds.mu.Lock()
	defer r.thresholds.mu.Unlock()
	r.thresholds.list = append(r.thresholds.list, t)
}

// Thresholds returns the thresholds the run declared, in order.
func (r *Run) Thresholds() []record.Threshold {
	r.thresholds.mu.Lock()
	defer r.thresholds.mu.Unlock()
	return append([]record.Threshold(nil), r.thresholds.list...)
}
