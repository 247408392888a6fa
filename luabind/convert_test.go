package luabind

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"wtd/engine/workload"
)

// TestQuietSecondP99IsNil: a playbook reading a workload's series sees a
// count of 0 and a nil p99 for an operation type that had no success in a
// second, and the p99 of the types that had.
func TestQuietSecondP99IsNil(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	res := workload.Result{Series: []workload.SecondPoint{
		{Second: 0, Counts: map[string]int64{"read": 5, "insert": 0}, P99Micros: map[string]float64{"read": 800}, Errors: map[string]int64{"insert": 2}},
		{Second: 1, Counts: map[string]int64{"read": 0, "insert": 0}, P99Micros: map[string]float64{}},
	}}
	r, err := resultToLua(L, res)
	if err != nil {
		t.Fatal(err)
	}
	L.SetGlobal("r", r)
	const check = `
local s0, s1 = r.series[1], r.series[2]
assert(s0.counts.read == 5 and s0.p99_micros.read == 800, "a measured p99")
assert(s0.counts.insert == 0 and s0.p99_micros.insert == nil and s0.errors.insert == 2, "failed inserts only: a count of 0, no p99")
assert(s1.counts.read == 0 and s1.p99_micros.read == nil and s1.p99_micros.insert == nil, "a quiet second: no p99")
assert(type(s1.p99_micros) == "table" and next(s1.p99_micros) == nil, "an empty table, to index without a guard")
`
	if err := L.DoString(check); err != nil {
		t.Error(err)
	}
}
