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

// RecordTrial records a trial of a tune{} search as an event of the run
// (wtd show lists the trials from these), with msg as its text.
func (r *Run) RecordTrial(t record.TuneTrial, msg string) {
	level := "info"
	if t.Status != record.StatusOK {
		level = "warn"
	}
	r.cfg.Store.AddEvent(r.ID, time.Now(), level, record.SourceTune, redact(msg), record.TuneAttrs(record.TuneKindTrial, t))
	r.printLine(r.cfg.Log, time.Now(), level, record.SourceTune, redact(msg))
}

// RecordTuneVerdict records the end of a tune{} search as an event of the
// run, with its verdict as the text.
func (r *Run) RecordTuneVerdict(v record.TuneVerdict) {
	r.cfg.Store.AddEvent(r.ID, time.Now(), "info", record.SourceTune, redact(v.Verdict), record.TuneAttrs(record.TuneKindVerdict, v))
	r.printLine(r.cfg.Log, time.Now(), "info", record.SourceTune, redact(v.Verdict))
}
