package record

import (
	"encoding/json"
	"time"

	"wtd/engine/store"
)

// SourceTune is the source of the events a tune{} search records: one per
// trial (the baseline, each trial of the search, each confirmation round)
// and one for its verdict. wtd show lists them from these events alone.
const SourceTune = "tune"

// Kinds of tune events.
const (
	TuneKindTrial   = "trial"
	TuneKindVerdict = "verdict"
)

// TuneTrial is one trial of a search as its event records it: N is 0 for
// the baseline, the round for a confirmation; Objective is the measure's value in compare's units (p99 in
// ms), nil when the trial was not measured; Status is "ok" or "failed"
// with Reason; Step is the seq of the trial's step (0: none ran).
type TuneTrial struct {
	Search    int                `json:"search"` // 1 for the run's first tune{}, 2 for its second, ...
	N         int                `json:"n"`
	Name      string             `json:"name"`  // the step's name: "baseline", "trial 3", "confirm best"
	Phase     string             `json:"phase"` // "baseline", "search" or "confirm"
	Settings  map[string]float64 `json:"settings"`
	Measure   string             `json:"measure"`
	Objective *float64           `json:"objective"`
	Status    string             `json:"status"`
	Reason    string             `json:"reason,omitempty"`
	Source    string             `json:"source,omitempty"` // how the optimiser chose the settings
	Step      int                `json:"step"`
}

// TuneVerdict is the end of a search: the best and baseline settings,
// the confirmation's figures and its verdict in words.
type TuneVerdict struct {
	Search         int                `json:"search"`
	Measure        string             `json:"measure"`
	Best           map[string]float64 `json:"best"`
	Baseline       map[string]float64 `json:"baseline"`
	BestTrial      int                `json:"best_trial"`
	Verdict        string             `json:"verdict"`
	ImprovementPct *float64           `json:"improvement_pct"`
	P              *float64           `json:"p"`
	ConfirmSteps   []int              `json:"confirm_steps"`
	Kept           bool               `json:"kept"`
}

// Tuning is a tune{} search of a run, read back from its events.
type Tuning struct {
	Search  int          `json:"search"`
	At      time.Time    `json:"at"` // the first trial's event
	Trials  []TuneTrial  `json:"trials"`
	Verdict *TuneVerdict `json:"verdict"` // nil while the search goes on, or when it ended without one
}

// TuneAttrs are the attributes of a tune event for v (a TuneTrial or a
// TuneVerdict) of kind.
func TuneAttrs(kind string, v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m == nil {
		m = map[string]any{}
	}
	m["kind"] = kind
	return m
}

// Tunings reads the run's tune{} searches from its events, in order.
func (rec *Record) Tunings() []Tuning {
	var out []Tuning
	index := map[int]int{}
	for _, ev := range rec.Events {
		if ev.Source != SourceTune || ev.Attrs == nil {
			continue
		}
		kind, _ := ev.Attrs["kind"].(string)
		search, _ := ev.Attrs["search"].(float64)
		i, ok := index[int(search)]
		if !ok {
			i = len(out)
			index[int(search)] = i
			out = append(out, Tuning{Search: int(search), At: ev.TS, Trials: []TuneTrial{}})
		}
		switch kind {
		case TuneKindTrial:
			var t TuneTrial
			if decodeAttrs(ev, &t) {
				out[i].Trials = append(out[i].Trials, t)
			}
		case TuneKindVerdict:
			var v TuneVerdict
			if decodeAttrs(ev, &v) {
				out[i].Verdict = &v
			}
		}
	}
	return out
}

func decodeAttrs(ev store.Event, v any) bool {
	b, err := json.Marshal(ev.Attrs)
	return err == nil && json.Unmarshal(b, v) == nil
}
