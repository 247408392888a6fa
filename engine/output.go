package engine

import (
	"math"
	"time"

	"wtd/engine/store"
)

// Event sources of what a playbook writes itself. Its print() and
// io.write() output is part of the record, one event per line, beside its
// log() lines (source "playbook") and wtd's own events; a report.table call
// is recorded as what it drew, so the table can be redrawn from the
// database.
const (
	SourcePrint = "print"
	SourceTable = "report.table"
)

// Output records one line the playbook wrote (without its newline).
func (r *Run) Output(line string) {
	r.cfg.Store.AddEvent(r.ID, time.Now(), "info", SourcePrint, redact(line), nil)
}

// RecordTable records that the playbook printed the table of its first
// steps steps with opt.
func (r *Run) RecordTable(opt ReportOptions, steps int) {
	r.cfg.Store.AddEvent(r.ID, time.Now(), "info", SourceTable, "report.table", map[string]any{
		"by": opt.By, "title": opt.Title, "steps": steps})
}

// TableOf reads a report.table event: the options and how many of the
// run's steps the table showed.
func TableOf(ev store.Event) (ReportOptions, int, bool) {
	if ev.Source != SourceTable {
		return ReportOptions{}, 0, false
	}
	var opt ReportOptions
	opt.By, _ = ev.Attrs["by"].(string)
	opt.Title, _ = ev.Attrs["title"].(string)
	n, _ := ev.Attrs["steps"].(float64)
	return opt, int(n), true
}

func nan() float64 { return math.NaN() }
