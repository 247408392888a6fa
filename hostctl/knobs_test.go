package hostctl

import (
	"slices"
	"strings"
	"testing"
)

// TestKnobTableRows: every row says what a user and a tuner need (type,
// default, how to read it, bounds for a number, values for an enum), names
// are unique, the rules name rows that exist, and the options of
// mongod.start come from the rows.
func TestKnobTableRows(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Knobs {
		if seen[strings.ToLower(k.Name)] {
			t.Errorf("knob %s appears twice", k.Name)
		}
		seen[strings.ToLower(k.Name)] = true
		if k.Type == "" || k.Default == "" || k.InForce == "" || k.Option == "" || k.Doc == "" {
			t.Errorf("knob %s lacks its type, default, option, doc or way to read it: %+v", k.Name, k)
		}
		if (k.Type == KnobInt || k.Type == KnobFloat) && k.Min == nil {
			t.Errorf("knob %s is a number without a minimum", k.Name)
		}
		if k.Type == KnobEnum && len(k.Values) == 0 {
			t.Errorf("knob %s is an enum without values", k.Name)
		}
		if !k.Restart && k.Runtime == "" {
			t.Errorf("knob %s changes at runtime but does not say how", k.Name)
		}
		if got, ok := KnobNamed(k.Name); !ok || got.Name != k.Name {
			t.Errorf("KnobNamed(%s) = %s, %v", k.Name, got.Name, ok)
		}
	}
	for _, r := range KnobRules {
		if !seen[strings.ToLower(r.Lower)] || !seen[strings.ToLower(r.Upper)] {
			t.Errorf("rule %s names a knob the table does not hold", r)
		}
	}
	if got, want := SettingOptions(), []string{"cacheSizeGB", "engineConfig", "syncdelay", "setParameter"}; !slices.Equal(got, want) {
		t.Errorf("SettingOptions() = %v, want %v", got, want)
	}
	for name, want := range map[string]string{"eviction.threads_min": `"eviction=(threads_min=N)"`, "eviction_target": `"eviction_target=N"`} {
		if got := MustKnob(name).Runtime; !strings.Contains(got, want) {
			t.Errorf("knob %s changes at runtime by %s, want %s in it", name, got, want)
		}
	}
	if k, ok := KnobNamed("executionControlConcurrentReadTransactions"); !ok || k.Name != "wiredTigerConcurrentReadTransactions" {
		t.Errorf("the 8.0 name of the read tickets finds %q, %v", k.Name, ok)
	}
}

// TestCheckKnobs: the one check of a set of knob values, as a tuner gives
// them: each value against its row, then the rules.
func TestCheckKnobs(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]float64
		want   []string // substrings of the error; none: valid
	}{
		{"mongod's defaults", map[string]float64{"eviction_target": 80, "eviction_trigger": 95, "eviction_dirty_target": 5,
			"eviction_dirty_trigger": 20, "eviction.threads_min": 4, "eviction.threads_max": 4, "checkpoint.wait": 0,
			"syncdelay": 60, "cacheSizeGB": 0.25, "wiredTigerConcurrentReadTransactions": 128}, nil},
		{"cache below 0.25", map[string]float64{"cacheSizeGB": 0.1},
			[]string{"cacheSizeGB 0.1: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25",
				`; for a smaller cache give WiredTiger's own size instead: engineConfig = "cache_size=100MB"`}},
		{"syncdelay out of range", map[string]float64{"syncdelay": 9e6 + 1},
			[]string{"syncdelay 9000001: syncdelay out of allowed range (0-9000000)"}},
		{"fractional threads", map[string]float64{"eviction.threads_max": 2.5},
			[]string{"eviction.threads_max 2.5: eviction.threads_max must be an integer"}},
		{"rules and ranges together", map[string]float64{"eviction_target": 96, "eviction_trigger": 95, "storageEngineConcurrentReadTransactions": 1},
			[]string{"eviction_target=96, eviction_trigger=95: eviction_target < eviction_trigger must hold",
				"wiredTigerConcurrentReadTransactions 1: Concurrent read transactions limit must be greater than or equal to 5"}},
		{"threads_min above threads_max", map[string]float64{"eviction.threads_min": 5, "eviction.threads_max": 3},
			[]string{"eviction.threads_min <= eviction.threads_max must hold"}},
		{"checkpoint target above 10TB", map[string]float64{"eviction_checkpoint_target": 11 << 40},
			[]string{"eviction_checkpoint_target 12094627905536: Value too large for key 'eviction_checkpoint_target' the maximum is 10995116277760"}},
		{"checkpoint target 0 turns it off", map[string]float64{"eviction_checkpoint_target": 0}, nil},
		{"idle handles kept over 100000 s", map[string]float64{"file_manager.close_idle_time": 100001},
			[]string{"file_manager.close_idle_time 100001: Value too large for key 'file_manager.close_idle_time' the maximum is 100000"}},
		{"idle handles never closed", map[string]float64{"file_manager.close_idle_time": 0}, nil},
		{"unknown knob", map[string]float64{"eviction_speed": 1}, []string{"eviction_speed: no such knob (wtd knobs lists them)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKnobs(tt.values)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("CheckKnobs = %v, want no error", err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("CheckKnobs = %v, want %q", err, w)
				}
			}
		})
	}
}

// TestWTDefaults: the values a restore puts back for a WiredTiger key no
// startup configuration set are the table's, nested keys as WiredTiger
// writes them.
func TestWTDefaults(t *testing.T) {
	got := WTDefaults()
	want := map[string]string{
		"eviction_target": "80", "eviction_trigger": "95", "eviction_dirty_target": "5", "eviction_dirty_trigger": "20",
		"eviction_checkpoint_target": "1", "eviction": "(threads_min=4,threads_max=4)", "checkpoint": "(wait=0,log_size=0)",
		"file_manager": "(close_idle_time=100000)",
	}
	if len(got) != len(want) {
		t.Errorf("WTDefaults() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("WTDefaults()[%s] = %q, want %q", k, got[k], v)
		}
	}
}
