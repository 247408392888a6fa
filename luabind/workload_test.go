package luabind

import (
	"testing"

	"wtd/engine/record"
	"wtd/engine/workload"
)

// TestWorkloadOptions runs testdata/workload_test.lua: the new operations,
// distributions, presets, rates, warm-ups, watches and sweep.threads from
// Lua, with their errors; the sweep's steps are recorded with their labels.
func TestWorkloadOptions(t *testing.T) {
	t.Parallel()
	tr := newTestRun(t, withServer(t))
	tr.mustRunFile(t, "workload_test.lua", tr.env(nil))
	var knee []record.StepRecord
	for _, st := range tr.run.Steps() {
		if st.Name == "knee" {
			knee = append(knee, st)
		}
	}
	if len(knee) != 2 {
		t.Fatalf("%d sweep steps, want 2", len(knee))
	}
	for i, st := range knee {
		wr, ok := st.Result.(workload.Result)
		if !ok || st.Labels["threads"] != i+1 || st.Labels["round"] != 1.0 || wr.Total.Count == 0 || st.Status != record.StatusOK {
			t.Errorf("sweep step %d: labels %v, result %T %+v, status %s", i, st.Labels, st.Result, wr.Total, st.Status)
		}
	}
}
