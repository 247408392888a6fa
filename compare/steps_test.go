package compare

import (
	"testing"

	"wtd/engine/record"
	"wtd/engine/workload"
)

// TestStepMeasureWithoutSuccess: a step whose operations all failed has
// no p99 (what tune then records as "p99 was not measured", not as the
// best p99 of the search) but a measured 0 ops/s.
func TestStepMeasureWithoutSuccess(t *testing.T) {
	st := record.StepRecord{Result: workload.Result{Total: workload.OpStats{Errors: 40}}}
	if v, better, err := StepMeasure(st, "p99"); err != nil || v != nil || better != LowerIsFaster {
		t.Errorf("p99 of a step without a success: %v %v %v, want nil", v, better, err)
	}
	if v, _, err := StepMeasure(st, "ops/s"); err != nil || v == nil || *v != 0 {
		t.Errorf("ops/s of a step without a success: %v %v, want 0", v, err)
	}
}
