package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"wtd/engine/store"
)

// RunRecord is everything recorded about a run, read back from the results
// database: what wtd show, compare and report start from.
type RunRecord struct {
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
	// SwapChange is, per step seq, how much used swap changed over the
	// step (host samples); absent when not sampled.
	SwapChange map[int]float64
}

// LoadRunRecord reads run id. An unknown id gives an error wrapping
// store.ErrNotFound.
func LoadRunRecord(ctx context.Context, st *store.Store, id int64) (*RunRecord, error) {
	r, err := st.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &RunRecord{Run: r, SwapChange: map[int]float64{}}
	if rec.Servers, err = st.Servers(ctx, id); err != nil {
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
	steps, err := st.Steps(ctx, id)
	if err != nil {
		return nil, err
	}
	rec.Steps = StepsFromStore(steps)
	if rec.Events, err = st.Events(ctx, id); err != nil {
		return nil, err
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

// Fields returns the eight provenance figures of step st of the run.
func (rec *RunRecord) Fields(st StepRecord) []Field {
	var swap *float64
	if v, ok := rec.SwapChange[st.Seq]; ok {
		swap = &v
	}
	return ProvenanceFields(st, Repetitions(rec.Steps)[RepetitionKey(st)], swap)
}

// Tables returns the report tables the playbook printed, redrawn from the
// recorded steps: each with its options and the steps it showed.
func (rec *RunRecord) Tables() []RecordedTable {
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
