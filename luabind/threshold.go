package luabind

import (
	lua "github.com/yuin/gopher-lua"

	"wtd/compare"
	"wtd/engine/record"
)

func (b *binding) openThreshold(L *lua.LState) {
	L.SetGlobal("threshold", L.NewFunction(b.threshold))
}

// threshold{ step = "reads all", measure = "p99", max = 5 }
// threshold{ step = "reads all", measure = "ops/s", min = 20000 }
// threshold{ step = "reads all", measure = "p99", vs_baseline = "+10%" }
//
// Declares a condition the run is held to at its end
// (engine.Run.AddThreshold): a measure compare knows (ops/s, p50, p99,
// pages/op, cache-peak, dirty-peak, app-evict; in its unit: ms, MB) of
// the steps named step, the median over rounds, at most max, at least min,
// or within vs_baseline of the previous ok run of the playbook with the
// same parameters. A threshold that does not hold, or whose value was not
// measured, fails the run with each violation in its reason; wtd show
// lists them. The declaration is checked at once.
func (b *binding) threshold(L *lua.LState) int {
	o := checkOptions(L, 1, "threshold", "step", "measure", "max", "min", "vs_baseline")
	var t record.Threshold
	t.Step, _ = o.str("step")
	t.Measure, _ = o.str("measure")
	if v, ok := o.number("max"); ok {
		t.Max = &v
	}
	if v, ok := o.number("min"); ok {
		t.Min = &v
	}
	t.VsBaseline, _ = o.str("vs_baseline")
	if err := compare.CheckThreshold(t); err != nil {
		raisef(L, "threshold: %v", err)
	}
	if b.run != nil {
		b.run.AddThreshold(t)
	}
	return 0
}
