package engine

import (
	"time"
	"wtd/engine/record"
)

// Output records one line the playbook wrote (without its newline).
func (r *Run) Output(line string) {
	r.cfg.Store.AddEvent(r.ID, time.Now(), "info", record.SourcePrint, redact(line), nil)
}

// RecordTable records that the playbook printed the table of its first
// steps steps with opt.
func (r *Run) RecordTable(opt record.ReportOptions, steps int) {
	r.cfg.Store.AddEvent(r.ID, time.Now(), "info", record.SourceTable, "report.table", map[string]any{
		"by": opt.By, "title": opt.Title, "verdict": opt.Verdict, "steps": steps})
}
