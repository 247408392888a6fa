package autotune

import (
	"fmt"
	"strings"
	"testing"

	"wtd/engine/tune"
)

// TestNewSpace: ranges are checked against the knob table (in mongod's
// or WiredTiger's words), whole-number knobs stay whole, and the table's
// rules between two searched knobs become the space's constraints.
func TestNewSpace(t *testing.T) {
	for _, c := range []struct {
		name   string
		ranges []Range
		knobs  string // name lo hi integer log, in the order given
		cons   string
		err    string
	}{
		{"dirty target and trigger", []Range{{Knob: "eviction_dirty_target", Lo: 2, Hi: 10}, {Knob: "eviction_dirty_trigger", Lo: 5, Hi: 30}},
			"eviction_dirty_target 2 10 true false; eviction_dirty_trigger 5 30 true false", "eviction_dirty_target<eviction_dirty_trigger", ""},
		{"threads: a rule that allows equal", []Range{{Knob: "eviction.threads_min", Lo: 1, Hi: 4}, {Knob: "eviction.threads_max", Lo: 2, Hi: 8}},
			"eviction.threads_min 1 4 true false; eviction.threads_max 2 8 true false", "eviction.threads_min<=eviction.threads_max", ""},
		{"a float knob on a log scale", []Range{{Knob: "cacheSizeGB", Lo: 0.25, Hi: 4, Log: true}},
			"cacheSizeGB 0.25 4 false true", "", ""},
		{"one side of a rule: no constraint", []Range{{Knob: "eviction_target", Lo: 50, Hi: 90}, {Knob: "checkpoint.wait", Lo: 10, Hi: 120}},
			"eviction_target 50 90 true false; checkpoint.wait 10 120 true false", "", ""},
		{"none", nil, "", "", "no knobs to tune"},
		{"unknown", []Range{{Knob: "eviction_speed", Lo: 1, Hi: 2}}, "", "", `no knob "eviction_speed": tune turns cacheSizeGB, eviction_target`},
		{"not a number", []Range{{Knob: "enableMajorityReadConcern", Lo: 0, Hi: 1}}, "", "", "enableMajorityReadConcern is a bool knob: tune searches numbers only"},
		{"twice", []Range{{Knob: "syncdelay", Lo: 1, Hi: 2}, {Knob: "syncdelay", Lo: 3, Hi: 4}}, "", "", "syncdelay is given twice"},
		{"empty range", []Range{{Knob: "syncdelay", Lo: 5, Hi: 5}}, "", "", "syncdelay {5, 5}: want {low, high} with low < high"},
		{"below the table", []Range{{Knob: "eviction_dirty_target", Lo: 0, Hi: 10}}, "", "", "eviction_dirty_target 0: Value too small for key 'eviction_dirty_target' the minimum is 1"},
		{"0 keeps the default", []Range{{Knob: "cacheSizeGB", Lo: 0, Hi: 1}}, "", "", "cacheSizeGB 0: storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or equal to 0.25"},
		{"percent and bytes", []Range{{Knob: "eviction_dirty_target", Lo: 5, Hi: 200}}, "", "", "its values up to 100 are percentages of the cache and above 100 bytes"},
		{"log from 0", []Range{{Knob: "checkpoint.wait", Lo: 0, Hi: 100, Log: true}}, "", "", "checkpoint.wait {0, 100} log = true: a log scale needs low above 0"},
		{"every error at once", []Range{{Knob: "x", Lo: 1, Hi: 2}, {Knob: "syncdelay", Lo: 2, Hi: 1}}, "", "", `no knob "x"` + "|syncdelay {2, 1}"},
		// The table's rule holds within the ranges: no setting could keep it.
		{"a rule no setting keeps", []Range{{Knob: "eviction_dirty_target", Lo: 30, Hi: 40}, {Knob: "eviction_dirty_trigger", Lo: 5, Hi: 20}}, "", "", "eviction_dirty_target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp, err := NewSpace(c.ranges)
			if c.err != "" {
				for _, want := range strings.Split(c.err, "|") {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("error %v, want %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var knobs, cons []string
			for _, k := range sp.Knobs() {
				knobs = append(knobs, fmt.Sprintf("%s %g %g %t %t", k.Name, k.Lo, k.Hi, k.Integer, k.Log))
			}
			for _, k := range sp.Constraints() {
				op := "<="
				if k.Strict {
					op = "<"
				}
				cons = append(cons, k.Lower+op+k.Upper)
			}
			if got := strings.Join(knobs, "; "); !sameSet(got, c.knobs) {
				t.Errorf("knobs %s, want %s", got, c.knobs)
			}
			if got := strings.Join(cons, "; "); got != c.cons {
				t.Errorf("constraints %q, want %q", got, c.cons)
			}
		})
	}
}

// sameSet compares two "; "-joined lists in any order.
func sameSet(a, b string) bool {
	in := map[string]int{}
	for _, s := range strings.Split(a, "; ") {
		in[s]++
	}
	for _, s := range strings.Split(b, "; ") {
		in[s]--
	}
	for _, n := range in {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestCheckFixed: a range that could break a rule with a knob the search
// does not turn (its value the server's) is refused; one that keeps it,
// or meets it where the rule allows equal, is not.
func TestCheckFixed(t *testing.T) {
	for _, c := range []struct {
		r    Range
		base tune.Settings
		err  string
	}{
		{Range{Knob: "eviction_dirty_target", Lo: 1, Hi: 19}, tune.Settings{"eviction_dirty_trigger": 20}, ""},
		{Range{Knob: "eviction_dirty_target", Lo: 1, Hi: 20}, tune.Settings{"eviction_dirty_trigger": 20},
			"eviction_dirty_target up to 20 would break eviction_dirty_target < eviction_dirty_trigger (the server's eviction_dirty_trigger is 20)"},
		{Range{Knob: "eviction_dirty_trigger", Lo: 4, Hi: 30}, tune.Settings{"eviction_dirty_target": 5},
			"eviction_dirty_trigger down to 4 would break eviction_dirty_target < eviction_dirty_trigger (the server's eviction_dirty_target is 5)"},
		{Range{Knob: "eviction.threads_max", Lo: 4, Hi: 8}, tune.Settings{"eviction.threads_min": 4}, ""},
		{Range{Knob: "eviction.threads_max", Lo: 1, Hi: 8}, tune.Settings{"eviction.threads_min": 4}, "eviction.threads_max down to 1 would break"},
		{Range{Knob: "eviction.threads_min", Lo: 1, Hi: 9}, tune.Settings{"eviction.threads_max": 8}, "eviction.threads_min up to 9 would break"},
	} {
		sp, err := NewSpace([]Range{c.r})
		if err != nil {
			t.Fatal(err)
		}
		if rk := ruleKnobs(sp); len(rk) != 1 || c.base[rk[0]] == 0 {
			t.Errorf("%s: the rules tie it to %v, want the one knob of %v", c.r.Knob, rk, c.base)
		}
		err = checkFixed(sp, c.base)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%+v with %v: %v", c.r, c.base, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v with %v: error %v, want %q", c.r, c.base, err, c.err)
		}
	}
}

// TestWTConfigAndSettingsText: the runtime WiredTiger knobs of a setting
// go in one configuration string in the table's order, nested keys
// grouped; the others (a parameter, a knob that needs a restart) do not.
func TestWTConfigAndSettingsText(t *testing.T) {
	set := tune.Settings{"eviction.threads_max": 6, "checkpoint.wait": 60, "eviction_dirty_target": 5, "eviction.threads_min": 2,
		"syncdelay": 30, "cacheSizeGB": 0.5}
	if got, want := wtConfig(set), "eviction_dirty_target=5,eviction=(threads_min=2,threads_max=6),checkpoint=(wait=60)"; got != want {
		t.Errorf("wtConfig = %q, want %q", got, want)
	}
	if got := wtConfig(tune.Settings{"syncdelay": 30}); got != "" {
		t.Errorf("wtConfig of a parameter alone = %q", got)
	}
	sp, err := NewSpace([]Range{{Knob: "syncdelay", Lo: 1, Hi: 100}, {Knob: "eviction_dirty_target", Lo: 1, Hi: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SettingsText(sp, tune.Settings{"eviction_dirty_target": 3, "syncdelay": 12.5}), "syncdelay=12.5 eviction_dirty_target=3"; got != want {
		t.Errorf("SettingsText = %q, want %q (the space's order)", got, want)
	}
}
