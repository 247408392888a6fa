package hostctl

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSettingsOptionsAreTheTables: Settings carries exactly the options
// the knob table's rows name, and args; each takes its flag and config key
// from its row, and its JSON name is the option's.
func TestSettingsOptionsAreTheTables(t *testing.T) {
	if got, want := OptionNames(), append(SettingOptions(), OptionArgs); !slices.Equal(got, want) {
		t.Fatalf("OptionNames() = %v, want the table's options and args %v", got, want)
	}
	for _, option := range SettingOptions() {
		if OptionType(option) == "" || OptionConfigKey(option) == "" {
			t.Errorf("option %s: type %q, config key %q", option, OptionType(option), OptionConfigKey(option))
		}
		if k, ok := optionKnob(option); option != setParameterKey && (!ok || k.Flag == "") {
			t.Errorf("option %s has no row with a flag", option)
		}
	}
	if OptionType("port") != "" || OptionConfigKey(OptionArgs) != "" {
		t.Errorf("port is typed %q, args have config key %q", OptionType("port"), OptionConfigKey(OptionArgs))
	}
	var every SettingsChange
	for _, option := range OptionNames() {
		v := map[KnobType]any{KnobFloat: 1.0, KnobString: "x=1", KnobMap: map[string]string{"a": "1"}, KnobList: []string{"--b"}}[OptionType(option)]
		if err := every.Set(option, v); err != nil {
			t.Fatal(err)
		}
	}
	full := every.To
	b, _ := json.Marshal(full)
	var keys map[string]any
	json.Unmarshal(b, &keys)
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	want := OptionNames()
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("JSON names %v, want the options' %v", names, want)
	}
	if c := ChangeOf(full); !slices.Equal(c.Given, OptionNames()) {
		t.Errorf("ChangeOf(every option).Given = %v", c.Given)
	}
}

// TestSettingsChangeApply: a restart changes the options given and keeps
// the others; setParameter is merged, args replaced, and a 0 given puts a
// number back to the server's default.
func TestSettingsChangeApply(t *testing.T) {
	cur := Settings{CacheSizeGB: 1, EngineConfig: "eviction_target=60", SyncDelay: 30,
		SetParameters: map[string]string{"a": "1", "b": "2"}, ExtraArgs: []string{"--nojournal"}}
	var ch SettingsChange
	for option, v := range map[string]any{"cacheSizeGB": 0.0, "setParameter": map[string]string{"b": "3"}, "args": []string{}} {
		if err := ch.Set(option, v); err != nil {
			t.Fatal(err)
		}
	}
	got := ch.Apply(cur)
	want := Settings{CacheSizeGB: 0, EngineConfig: "eviction_target=60", SyncDelay: 30,
		SetParameters: map[string]string{"a": "1", "b": "3"}, ExtraArgs: []string{}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Apply (-want +got):\n%s", d)
	}
	if cur.SetParameters["b"] != "2" {
		t.Error("Apply changed the parameters it merged into")
	}
	if d := cmp.Diff(cur, (SettingsChange{}).Apply(cur)); d != "" {
		t.Errorf("an empty change changed (-want +got):\n%s", d)
	}
	for _, tt := range []struct {
		option string
		v      any
		want   string
	}{
		{"cacheSizeGB", "big", "cacheSizeGB: want a float, got string"},
		{"setParameter", 1.0, "setParameter: want a map, got float64"},
		{"port", 1.0, "port: not an option of the settings (" + strings.Join(OptionNames(), ", ") + ")"},
	} {
		if err := ch.Set(tt.option, tt.v); err == nil || err.Error() != tt.want {
			t.Errorf("Set(%s, %v) = %v, want %q", tt.option, tt.v, err, tt.want)
		}
	}
}

// TestSettingsConfigEntriesReadBack: the keys of mongod's YAML
// configuration a change sets come from the table, in its order, and
// reading them back gives the settings again.
func TestSettingsConfigEntriesReadBack(t *testing.T) {
	s := Settings{CacheSizeGB: 0.5, EngineConfig: "eviction_target=70", SyncDelay: 25,
		SetParameters: map[string]string{"ttlMonitorSleepSecs": "30", "a": "x"}, ExtraArgs: []string{"--nojournal"}}
	entries := ChangeOf(s).ConfigEntries()
	want := []ConfigEntry{
		{Key: "storage.wiredTiger.engineConfig.cacheSizeGB", Type: KnobFloat, Number: 0.5},
		{Key: "storage.wiredTiger.engineConfig.configString", Type: KnobString, Text: "eviction_target=70"},
		{Key: "storage.syncPeriodSecs", Type: KnobFloat, Number: 25},
		{Key: "setParameter.a", Type: KnobMap, Text: "x"},
		{Key: "setParameter.ttlMonitorSleepSecs", Type: KnobMap, Text: "30"},
	}
	if d := cmp.Diff(want, entries); d != "" {
		t.Fatalf("ConfigEntries (-want +got):\n%s", d)
	}
	doc := map[string]string{}
	params := map[string]string{}
	for _, e := range entries {
		if name, ok := strings.CutPrefix(e.Key, setParameterKey+"."); ok {
			params[name] = e.Text
		} else if e.Type == KnobFloat {
			doc[e.Key] = formatFloat(e.Number)
		} else {
			doc[e.Key] = e.Text
		}
	}
	value := func(key string) (string, bool) { v, ok := doc[key]; return v, ok }
	got, err := ReadSettings(value, func(string) map[string]string { return params })
	s.ExtraArgs = nil // a config file has no command-line words
	if d := cmp.Diff(s, got); err != nil || d != "" {
		t.Errorf("ReadSettings = %v (-want +got):\n%s", err, d)
	}
	doc["storage.syncPeriodSecs"] = "soon"
	if _, err := ReadSettings(value, nil); err == nil || err.Error() != `storage.syncPeriodSecs "soon": not a number` {
		t.Errorf("ReadSettings of a syncPeriodSecs that is no number = %v", err)
	}
}

// TestSettingsText: the options given, as a playbook writes them.
func TestSettingsText(t *testing.T) {
	for _, tt := range []struct {
		s    Settings
		want string
	}{
		{Settings{}, "defaults"},
		{Settings{CacheSizeGB: 0.25, EngineConfig: "eviction_target=60", SetParameters: map[string]string{"b": "2", "a": "1"}, ExtraArgs: []string{"--nojournal"}},
			`cacheSizeGB=0.25 engineConfig="eviction_target=60" setParameter={a=1, b=2} args=["--nojournal"]`},
		{Settings{SyncDelay: 2e6}, "syncdelay=2e+06"},
	} {
		if got := tt.s.Text(); got != tt.want {
			t.Errorf("Text() = %s, want %s", got, tt.want)
		}
	}
}
