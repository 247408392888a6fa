package luabind

import (
	"fmt"

	"wtd/engine/record"

	lua "github.com/yuin/gopher-lua"
)

func (b *binding) openReport(L *lua.LState) {
	L.SetGlobal("report", moduleTable(L, "report", map[string]lua.LGFunction{
		"table": b.reportTable,
		"steps": b.reportSteps,
	}))
}

// report.table{ by = "cacheSizeGB", title = "...", verdict = true }
//
// Prints the run's steps so far as a table (record.WriteReport): one row
// per step, grouped by the label or setting named by by, then min/median/max
// of ops/s over repeated steps. verdict = true (with by) adds a column
// comparing each step with the steps of by's first value, as
// wtd compare --by does. The call is recorded with the run, so the
// table can be redrawn from the database (wtd show).
func (b *binding) reportTable(L *lua.LState) int {
	o := checkOptions(L, 1, "report.table", "by", "title", "verdict")
	var opt record.ReportOptions
	opt.By, _ = o.str("by")
	opt.Title, _ = o.str("title")
	opt.Verdict, _ = o.boolean("verdict")
	if opt.Verdict && opt.By == "" {
		b.raise(L, "report.table", fmt.Errorf("verdict = true needs by: the label or setting whose first value the steps are compared with"))
	}
	steps := b.run.Steps()
	record.WriteReport(b.out, steps, opt)
	b.run.RecordTable(opt, len(steps))
	return 0
}

// report.steps() -> list of the run's finished steps
//
// Each step is record.StepRecord by its JSON names: name, seq, labels,
// status, error, start and end (RFC 3339 text), settings, provenance, result, server.
func (b *binding) reportSteps(L *lua.LState) int {
	v, err := structToLua(L, b.run.Steps())
	if err != nil {
		b.raise(L, "report.steps", err)
	}
	L.Push(v)
	return 1
}
