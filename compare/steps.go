package compare

import (
	"strings"

	"wtd/engine/record"
)

// StepMeasure returns measure name (one of MeasureNames) of one step, in
// the unit wtd compare shows it in (p99 in ms, ops/s), and which way it
// improves; nil when the step did not measure it.
func StepMeasure(st record.StepRecord, name string) (*float64, Better, error) {
	m, err := measureNamed(name)
	if err != nil {
		return nil, Neutral, err
	}
	v := m.value(record.MeasuresOf(st))
	if v == nil {
		return nil, m.better, nil
	}
	x := *v * m.scale
	return &x, m.better, nil
}

// MeasureInfo says which way measure name (one of MeasureNames) improves
// and its unit as wtd compare names it ("ms" for p99, "ops/s").
func MeasureInfo(name string) (better Better, unit string, err error) {
	m, err := measureNamed(name)
	if err != nil {
		return Neutral, "", err
	}
	unit = m.name
	if _, u, ok := strings.Cut(m.name, " "); ok {
		unit = u
	}
	return m.better, unit, nil
}

// Steps compares steps b with steps a of run (rounds of the same work
// with two settings, such as a tuner's confirmation): the row wtd compare
// shows for all the rounds of a repeated step, every measure judged on the
// per-second values of the rounds together where it has them, else on one
// value a round.
func Steps(run int64, title string, a, b []record.StepRecord, opt Options) StepRow {
	opt = opt.withDefaults()
	res := &Result{A: RunRef{ID: run}, B: RunRef{ID: run}, Alpha: opt.Alpha, MinChange: opt.MinChange, Test: opt.Test}
	first := a[0]
	return compareRow(title, first, a, b, true, true, res, opt)
}

// Measure returns the row's measure name (one of MeasureNames), as it
// names it for a workload or a load.
func (s StepRow) Measure(name string) (MeasureRow, bool) {
	m, err := measureNamed(name)
	if err != nil {
		return MeasureRow{}, false
	}
	for _, mr := range s.Measures {
		if mr.Measure == m.name || (m.loadName != "" && mr.Measure == m.loadName) {
			return mr, true
		}
	}
	return MeasureRow{}, false
}
