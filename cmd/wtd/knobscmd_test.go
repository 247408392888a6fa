package main

import (
	"encoding/json"
	"strings"
	"testing"

	"wtd/hostctl"
)

// TestKnobsListsEveryKnob: `wtd knobs` prints a line per knob with its
// flag, key, range, default and whether it needs a restart, then the rules.
func TestKnobsListsEveryKnob(t *testing.T) {
	res := runCLI(t, nil, "knobs")
	if res.code != 0 {
		t.Fatalf("wtd knobs: exit %d: %s", res.code, res.stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 0 && lines[f[0]] == "" {
			lines[f[0]] = l
		}
	}
	for _, k := range hostctl.Knobs {
		if _, ok := lines[k.Name]; !ok {
			t.Errorf("wtd knobs has no line for %s:\n%s", k.Name, res.stdout)
		}
	}
	want := map[string][]string{
		"cacheSizeGB":                          {"--wiredTigerCacheSizeGB", "storage.wiredTiger.engineConfig.cacheSizeGB", "0.25..10000 GB", "restart"},
		"eviction_target":                      {"--wiredTigerEngineConfigString", "configString: eviction_target", "10..10TB", " 80 ", "runtime"},
		"eviction.threads_max":                 {"1..20 threads", "4 (WiredTiger: 8)", "runtime"},
		"checkpoint.log_size":                  {"0..2GB bytes"},
		"syncdelay":                            {"--syncdelay", "storage.syncPeriodSecs", "0..9000000 s", " 60 ", "runtime"},
		"wiredTigerConcurrentReadTransactions": {"setParameter.wiredTigerConcurrentReadTransactions", "5.. tickets", " 128 ", "runtime"},
		"enableMajorityReadConcern":            {"--enableMajorityReadConcern", "replication.enableMajorityReadConcern", "bool", "true", "restart"},
	}
	for name, parts := range want {
		for _, p := range parts {
			if !strings.Contains(lines[name], p) {
				t.Errorf("wtd knobs line for %s = %q, want %q in it", name, lines[name], p)
			}
		}
	}
	if !strings.Contains(res.stdout, "eviction.threads_min <= eviction.threads_max") {
		t.Errorf("wtd knobs does not list the rules:\n%s", res.stdout)
	}
}

// TestKnobsJSON: `wtd knobs --json` is the table itself, for a tuner to
// read: bounds as numbers, defaults, restart need and rules.
func TestKnobsJSON(t *testing.T) {
	res := runCLI(t, nil, "knobs", "--json")
	if res.code != 0 {
		t.Fatalf("wtd knobs --json: exit %d: %s", res.code, res.stderr)
	}
	var got struct {
		Knobs []struct {
			Name, Flag, Default, Type string
			ConfigKey                 string   `json:"config_key"`
			WTDefault                 string   `json:"wt_default"`
			Min                       *float64 `json:"min"`
			Max                       *float64 `json:"max"`
			Restart                   bool
		}
		Rules []struct {
			Lower, Upper string
			Strict       bool
		}
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
		t.Fatalf("wtd knobs --json is not JSON: %v\n%s", err, res.stdout)
	}
	if len(got.Knobs) != len(hostctl.Knobs) || len(got.Rules) != len(hostctl.KnobRules) {
		t.Fatalf("wtd knobs --json has %d knobs and %d rules, want %d and %d", len(got.Knobs), len(got.Rules), len(hostctl.Knobs), len(hostctl.KnobRules))
	}
	byName := map[string]int{}
	for i, k := range got.Knobs {
		byName[k.Name] = i
	}
	tm := got.Knobs[byName["eviction.threads_max"]]
	if tm.Min == nil || *tm.Min != 1 || tm.Max == nil || *tm.Max != 20 || tm.Default != "4" || tm.WTDefault != "8" || tm.Restart || tm.Type != "int" {
		t.Errorf("eviction.threads_max = %+v, want int 1..20, default 4 (WiredTiger 8), runtime", tm)
	}
	cs := got.Knobs[byName["cacheSizeGB"]]
	if cs.Flag != "wiredTigerCacheSizeGB" || cs.ConfigKey != "storage.wiredTiger.engineConfig.cacheSizeGB" || cs.Min == nil || *cs.Min != 0.25 || !cs.Restart {
		t.Errorf("cacheSizeGB = %+v, want flag, key, min 0.25 and restart", cs)
	}
	if r := got.Rules[0]; r.Lower != "eviction_target" || r.Upper != "eviction_trigger" || !r.Strict {
		t.Errorf("first rule = %+v, want eviction_target < eviction_trigger", r)
	}
}
