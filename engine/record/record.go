// Package record is the read side of runs: what a step recorded
// (StepRecord: its settings, provenance, server deltas and host load), a
// run as the results database holds it (Record, read by Load), the fields
// and their formatting ("–" for what was not measured, Dash), the text
// tables of steps (WriteReport), what a change set (ChangeWhat), and the
// one JSON shape of a run (View, Run) that wtd show --json, wtd runs --json and GET /api/v1/runs[/{id}]
// print, documented in docs/json.md. wtd show, the report and compare read
// runs through it. Everything here is built from the store alone: no
// server, no process of the run is asked, so a run recorded elsewhere (or
// imported) reads the same.
package record

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"wtd/engine/store"
)

// Record is everything recorded about a run, read back from the results
// database: what wtd show, compare and report start from.
type Record struct {
	Run     store.Run
	Servers []store.ServerRecord
	// Changes are what the run changed on servers it did not start, and
	// whether each was put back.
	Changes []store.Change
	Files   []store.Artifact // without content
	Samples int64
	Sources []string
	Steps   []StepRecord
	Events  []store.Event
	// Thresholds are those the playbook declared, as they held at the
	// run's end (none recorded while it runs).
	Thresholds []store.Threshold
	// SwapChange is, per step seq, how much used swap changed over the
	// step (host samples); absent when not sampled.
	SwapChange map[int]float64
	// Verdict is the run's regression verdict as the daemon recorded it
	// (a compare.RunVerdict as JSON); nil when none was.
	Verdict json.RawMessage
	// Push is the run's entry in the outbox of the central results store;
	// nil when it was never queued.
	Push *store.Push
	// Key names a run read from the central results store (HOSTID:RUN);
	// empty for a run of this results database.
	Key string
}

// Load reads run id. An unknown id gives an error wrapping
// store.ErrNotFound.
func Load(ctx context.Context, st *store.Store, id int64) (*Record, error) {
	rec, err := LoadSteps(ctx, st, id)
	if err != nil {
		return nil, err
	}
	if rec.Changes, err = st.Changes(ctx, id); err != nil {
		return nil, err
	}
	if rec.Files, err = st.Artifacts(ctx, id); err != nil {
		return nil, err
	}
	if rec.Samples, err = st.SampleCount(ctx, id); err != nil {
		return nil, err
	}
	if rec.Sources, err = st.SampleSources(ctx, id); err != nil {
		return nil, err
	}
	if rec.Events, err = st.Events(ctx, id); err != nil {
		return nil, err
	}
	if rec.Thresholds, err = st.Thresholds(ctx, id); err != nil {
		return nil, err
	}
	vs, err := Verdicts(ctx, st, id)
	if err != nil {
		return nil, err
	}
	rec.Verdict = vs[id]
	pushes, err := st.Pushes(ctx, id)
	if err != nil {
		return nil, err
	}
	if p, ok := pushes[id]; ok {
		rec.Push = &p
	}
	swap, err := st.SeriesSet(ctx, id, "host", []string{"mem.swap_used"})
	if err != nil {
		return nil, fmt.Errorf("read swap of run %d: %w", id, err)
	}
	for _, s := range rec.Steps {
		end := s.End
		if end.IsZero() {
			end = time.Now()
		}
		if v := WindowChange(swap.TS, swap.Values[0], s.Start, end); v != nil {
			rec.SwapChange[s.Seq] = *v
		}
	}
	return rec, nil
}

// LoadSteps reads what a comparison uses of run id: the run, its servers
// and its steps. Not its events, files, samples or verdict, which Load
// reads for show and report: a scheduled run's verdict is compared at its
// end, and an hour's host samples are not needed for it.
func LoadSteps(ctx context.Context, st *store.Store, id int64) (*Record, error) {
	r, err := st.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &Record{Run: r, SwapChange: map[int]float64{}}
	if rec.Servers, err = st.Servers(ctx, id); err != nil {
		return nil, err
	}
	steps, err := st.Steps(ctx, id)
	if err != nil {
		return nil, err
	}
	rec.Steps = StepsFromStore(steps)
	return rec, nil
}

// VerdictAttr is the key of a run's regression verdict (a
// compare.RunVerdict) in the attributes of its end event in the daemon's
// history (schedule_events, event "end").
const VerdictAttr = "verdict"

// Verdicts reads the recorded regression verdicts of runs, as JSON; a run
// without one is absent.
func Verdicts(ctx context.Context, st *store.Store, runs ...int64) (map[int64]json.RawMessage, error) {
	return st.RunEndAttr(ctx, VerdictAttr, runs...)
}

// Fields returns the eight provenance figures of step st of the run.
func (rec *Record) Fields(st StepRecord) []Field {
	var swap *float64
	if v, ok := rec.SwapChange[st.Seq]; ok {
		swap = &v
	}
	return ProvenanceFields(st, Repetitions(rec.Steps)[RepetitionKey(st)], swap)
}

// Tables returns the report tables the playbook printed, redrawn from the
// recorded steps: each with its options and the steps it showed.
func (rec *Record) Tables() []RecordedTable {
	var out []RecordedTable
	for _, ev := range rec.Events {
		if opt, n, ok := TableOf(ev); ok {
			n = min(n, len(rec.Steps))
			out = append(out, RecordedTable{At: ev.TS, Options: opt, Steps: rec.Steps[:n]})
		}
	}
	return out
}

// RecordedTable is one report.table call of a run.
type RecordedTable struct {
	At      time.Time
	Options ReportOptions
	Steps   []StepRecord
}

// Text is the table as the run printed it.
func (t RecordedTable) Text() string {
	var b strings.Builder
	WriteReport(&b, t.Steps, t.Options)
	return b.String()
}
