package compare

import (
	"context"
	"fmt"
	"strings"

	"wtd/engine/record"
	"wtd/engine/store"
)

// HistoryOptions shape a history.
type HistoryOptions struct {
	// Measure is one of MeasureNames (default "ops/s").
	Measure string
	// Alpha is the significance level of a change point (default
	// DefaultHistoryAlpha).
	Alpha float64
	// MinSegment is the fewest runs on each side of a change point
	// (default DefaultMinSegment).
	MinSegment int
	// Limit keeps the newest runs only (0: all).
	Limit int
}

// MeasureNames are the measures a history can follow, as flags name them.
var MeasureNames = []string{"ops/s", "p50", "p99", "pages/op", "cache-peak", "dirty-peak", "app-evict",
	"read-latency", "write-latency", "pages/s", "app-evict/s", "cache", "dirty"}

func measureNamed(name string) (measure, error) {
	if name == "" {
		name = "ops/s"
	}
	for i, n := range MeasureNames {
		if strings.EqualFold(name, n) || strings.EqualFold(name, measures[i].name) {
			return measures[i], nil
		}
	}
	return measure{}, fmt.Errorf("unknown measure %q: want one of %s", name, strings.Join(MeasureNames, ", "))
}

// HistoryPoint is a step's measure in one run (nil: not measured there).
type HistoryPoint struct {
	Run   int64    `json:"run"`
	Value *float64 `json:"value"`
}

// HistoryChange is a change point of a step's measure across runs.
type HistoryChange struct {
	ChangePoint
	// Run is the first run after the change.
	Run int64 `json:"run"`
	// Kind is regression, improvement, or change (for a measure that is
	// neither better higher nor lower).
	Kind string `json:"kind"`
	// Settings are the step's settings that differ between the last run
	// before the change and the first after it ("cacheSizeGB=1 (was
	// 2)"), empty when none did or they were not recorded.
	Settings []string `json:"settings_changed"`
}

// HistorySeries is one matched step across the runs.
type HistorySeries struct {
	Step    string          `json:"step"`
	Points  []HistoryPoint  `json:"points"`
	Changes []HistoryChange `json:"changes"`
	// Note says why no change point was looked for: too few runs with a
	// value for MinRuns on each side.
	Note string `json:"note,omitempty"`
}

// History is a measure of each matched step across the ok runs of a
// playbook with the same parameters, oldest first, with its change points.
type History struct {
	Playbook string         `json:"playbook"`
	Measure  string         `json:"measure"`
	Params   map[string]any `json:"params"`
	Alpha    float64        `json:"alpha"`
	// MinRuns is the fewest runs on each side of a change point.
	MinRuns int             `json:"min_runs"`
	Runs    []RunRef        `json:"runs"`
	Series  []HistorySeries `json:"series"`
	// Skipped counts the ok runs of the playbook left out because their
	// parameters differ from the newest run's.
	Skipped int `json:"skipped_other_params"`
}

// LoadHistory reads the ok runs of playbook that have the newest one's
// parameters and finds the change points of opt.Measure in each step.
func LoadHistory(ctx context.Context, st *store.Store, playbook string, opt HistoryOptions) (*History, error) {
	m, err := measureNamed(opt.Measure)
	if err != nil {
		return nil, err
	}
	runs, err := st.FindRuns(ctx, store.RunFilter{Playbook: playbook, Status: store.StatusOK})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no ok run of playbook %s: %w", playbook, store.ErrNotFound)
	}
	var kept []store.Run
	skipped := 0
	for _, r := range runs {
		switch {
		case !store.SameParams(r.Params, runs[0].Params):
			skipped++
		case opt.Limit <= 0 || len(kept) < opt.Limit:
			kept = append(kept, r)
		}
	}
	steps := make([][]record.StepRecord, len(kept))
	for i, r := range kept {
		raw, err := st.Steps(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		steps[len(kept)-1-i] = record.StepsFromStore(raw)
	}
	refs := make([]RunRef, len(kept))
	for i, r := range kept {
		refs[len(kept)-1-i] = ref(r)
	}
	h := BuildHistory(refs, steps, m, opt)
	h.Playbook, h.Skipped = playbook, skipped
	return h, nil
}

// BuildHistory follows measure m of every step across runs (oldest first;
// steps[i] are the steps of runs[i]).
func BuildHistory(runs []RunRef, steps [][]record.StepRecord, m measure, opt HistoryOptions) *History {
	if opt.Alpha <= 0 || opt.Alpha >= 1 {
		opt.Alpha = DefaultHistoryAlpha
	}
	if opt.MinSegment < 2 {
		opt.MinSegment = DefaultMinSegment
	}
	h := &History{Measure: m.name, Alpha: opt.Alpha, MinRuns: opt.MinSegment, Runs: runs, Series: []HistorySeries{}}
	if len(runs) > 0 {
		h.Params = runs[len(runs)-1].Params
	}
	var order []string
	byStep := map[string][]HistoryPoint{}
	settings := map[string][]*record.Settings{}
	for i, list := range steps {
		keys, byKey := matchKeys(list, nil)
		for _, k := range keys {
			st := byKey[k]
			if _, ok := byStep[k]; !ok {
				order = append(order, k)
				byStep[k] = make([]HistoryPoint, len(runs))
				settings[k] = make([]*record.Settings, len(runs))
				for j := range runs {
					byStep[k][j].Run = runs[j].ID
				}
			}
			settings[k][i] = st.Settings
			if v := m.value(record.MeasuresOf(st)); v != nil && st.Status == record.StatusOK {
				x := *v * m.scale
				byStep[k][i].Value = &x
			}
		}
	}
	for _, k := range order {
		pts := byStep[k]
		var vals []float64
		var at []int
		for i, p := range pts {
			if p.Value != nil {
				vals = append(vals, *p.Value)
				at = append(at, i)
			}
		}
		s := HistorySeries{Step: k, Points: pts, Changes: []HistoryChange{}}
		if len(vals) > 0 && len(vals) < 2*opt.MinSegment {
			s.Note = fmt.Sprintf("too few runs (%d; at least %d needed)", len(vals), 2*opt.MinSegment)
		}
		for _, cp := range ChangePoints(vals, opt.Alpha, opt.MinSegment) {
			kind := "change"
			switch direction(cp.After > cp.Before, m.better) {
			case Faster:
				kind = "improvement"
			case Slower:
				kind = "regression"
			}
			before, after := settings[k][at[cp.Index-1]], settings[k][at[cp.Index]]
			changed := record.SettingsChanges(before, after)
			if changed == nil {
				changed = []string{}
			}
			s.Changes = append(s.Changes, HistoryChange{ChangePoint: cp, Run: pts[at[cp.Index]].Run, Kind: kind, Settings: changed})
		}
		h.Series = append(h.Series, s)
	}
	return h
}
