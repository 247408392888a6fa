package hostctl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Settings are the knobs a server is given: the options of mongod.start
// and m:restart that the rows of the knob table name (Knob.Option), plus
// args. One type serves the start, a restart's change, a service's config
// file, the restore of a config file and the settings in force a step
// records; its JSON names are the options' own.
type Settings struct {
	// CacheSizeGB is --wiredTigerCacheSizeGB; 0 keeps the server default.
	CacheSizeGB float64 `json:"cacheSizeGB,omitempty"`
	// EngineConfig is --wiredTigerEngineConfigString, e.g.
	// "eviction_target=60,eviction_trigger=80".
	EngineConfig string `json:"engineConfig,omitempty"`
	// SyncDelay is --syncdelay in seconds (the checkpoint interval); 0
	// keeps the default.
	SyncDelay float64 `json:"syncdelay,omitempty"`
	// SetParameters become repeated --setParameter name=value, by name.
	SetParameters map[string]string `json:"setParameter,omitempty"`
	// ExtraArgs are appended to the command line as they are.
	ExtraArgs []string `json:"args,omitempty"`
}

// OptionArgs is the option of command-line words (mongod.start's args).
const OptionArgs = "args"

// setParameterKey is the section of mongod's YAML configuration that
// holds server parameters, and the flag that sets one.
const setParameterKey = "setParameter"

// settingField is one option of Settings and where its value is; exactly
// one of the pointers is set.
type settingField struct {
	option string
	num    *float64
	text   *string
	params *map[string]string
	list   *[]string
}

// fields are the options of s, in the table's order, args last. A knob
// that is an option of its own (not a key inside engineConfig or a server
// parameter) is a row of the table, a field of Settings and a line here.
func (s *Settings) fields() []settingField {
	return []settingField{
		{option: "cacheSizeGB", num: &s.CacheSizeGB},
		{option: "engineConfig", text: &s.EngineConfig},
		{option: "syncdelay", num: &s.SyncDelay},
		{option: setParameterKey, params: &s.SetParameters},
		{option: OptionArgs, list: &s.ExtraArgs},
	}
}

func (f settingField) kind() KnobType {
	switch {
	case f.num != nil:
		return KnobFloat
	case f.text != nil:
		return KnobString
	case f.params != nil:
		return KnobMap
	}
	return KnobList
}

// given reports whether the field holds a value other than its zero.
func (f settingField) given() bool {
	switch {
	case f.num != nil:
		return *f.num != 0
	case f.text != nil:
		return *f.text != ""
	case f.params != nil:
		return *f.params != nil
	}
	return *f.list != nil
}

// optionKnob is the first row an option carries: its flag and config key.
func optionKnob(option string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Option == option {
			return k, true
		}
	}
	return Knob{}, false
}

// OptionNames are the options Settings carries: SettingOptions, then
// args.
func OptionNames() []string {
	var s Settings
	var out []string
	for _, f := range s.fields() {
		out = append(out, f.option)
	}
	return out
}

// OptionType is the type of an option's value: KnobFloat, KnobString
// (engineConfig), KnobMap (setParameter) or KnobList (args); "" for a
// name that is not an option.
func OptionType(option string) KnobType {
	var s Settings
	for _, f := range s.fields() {
		if f.option == option {
			return f.kind()
		}
	}
	return ""
}

// OptionConfigKey is the key of mongod's YAML configuration an option
// sets ("storage.syncPeriodSecs"; "setParameter" for the section of
// parameters); "" for args.
func OptionConfigKey(option string) string {
	if option == setParameterKey {
		return setParameterKey
	}
	if k, ok := optionKnob(option); ok && k.Option != OptionArgs {
		return k.ConfigKey
	}
	return ""
}

// Flags are the command-line arguments of the settings: each option's
// flag from the table, parameters by name, then args as they are.
func (s Settings) Flags() []string {
	var args []string
	for _, f := range s.fields() {
		k, _ := optionKnob(f.option)
		switch {
		case !f.given():
		case f.num != nil:
			args = append(args, "--"+k.Flag, formatFloat(*f.num))
		case f.text != nil:
			args = append(args, "--"+k.Flag, *f.text)
		case f.params != nil:
			for _, n := range sortedKeys(*f.params) {
				args = append(args, "--"+setParameterKey, n+"="+(*f.params)[n])
			}
		default:
			args = append(args, *f.list...)
		}
	}
	return args
}

// Text words the options given, as a playbook writes them:
// `cacheSizeGB=0.25 engineConfig="eviction_target=60"`; "defaults" when
// none is.
func (s Settings) Text() string {
	var parts []string
	for _, f := range s.fields() {
		switch {
		case !f.given():
		case f.num != nil:
			parts = append(parts, f.option+"="+strconv.FormatFloat(*f.num, 'g', -1, 64))
		case f.text != nil:
			parts = append(parts, f.option+"="+strconv.Quote(*f.text))
		case f.params != nil:
			var kv []string
			for _, n := range sortedKeys(*f.params) {
				kv = append(kv, n+"="+(*f.params)[n])
			}
			parts = append(parts, f.option+"={"+strings.Join(kv, ", ")+"}")
		default:
			parts = append(parts, f.option+"="+fmt.Sprintf("%q", *f.list))
		}
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, " ")
}

// Check checks the settings, in mongod's own words where mongod has them
// (for a server wtd does not start itself too: a service's config file).
func (s Settings) Check() error {
	if errs := s.errors(); len(errs) > 0 {
		return fmt.Errorf("validate mongod settings: %w", errors.Join(errs...))
	}
	return nil
}

// errors checks each option against the table: a number against its row,
// parameters by name and value, engineConfig by the sandbox and the rows
// of the keys it sets, args by the sandbox.
func (s Settings) errors() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format, a...))
	}
	for _, f := range s.fields() {
		switch {
		case f.num != nil:
			if err := MustKnob(f.option).Check(*f.num); err != nil {
				errs = append(errs, err)
			}
		case f.text != nil:
			if err := CheckWTConfig(*f.text); err != nil {
				bad("%s: %w", f.option, err)
			} else if err := CheckWTKnobs(*f.text); err != nil {
				bad("%s: %w", f.option, err)
			}
		case f.params != nil:
			for _, n := range sortedKeys(*f.params) {
				if n == "" || strings.ContainsAny(n, "= ") {
					bad("%s %q: a parameter name has no '=' or spaces", f.option, n)
				} else if err := CheckParameter(n, (*f.params)[n]); err != nil {
					bad("%s %w", f.option, err)
				}
			}
		default:
			if err := CheckArgs(*f.list); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// SettingsChange is what a restart changes: the options in Given take
// their values from To (setParameter is merged into the parameters in
// force, args replace the current ones); the others keep theirs.
type SettingsChange struct {
	To    Settings
	Given []string
}

// ChangeOf is the change to the values s holds (its options that are not
// zero).
func ChangeOf(s Settings) SettingsChange {
	c := SettingsChange{To: s}
	for _, f := range s.fields() {
		if f.given() {
			c.Given = append(c.Given, f.option)
		}
	}
	return c
}

// Gives reports whether the change gives option.
func (c SettingsChange) Gives(option string) bool { return slices.Contains(c.Given, option) }

// Set gives option the value v: a float64, string, map[string]string or
// []string as OptionType says.
func (c *SettingsChange) Set(option string, v any) error {
	for _, f := range c.To.fields() {
		if f.option != option {
			continue
		}
		ok := false
		switch x := v.(type) {
		case float64:
			if ok = f.num != nil; ok {
				*f.num = x
			}
		case string:
			if ok = f.text != nil; ok {
				*f.text = x
			}
		case map[string]string:
			if ok = f.params != nil; ok {
				*f.params = x
			}
		case []string:
			if ok = f.list != nil; ok {
				*f.list = x
			}
		}
		if !ok {
			return fmt.Errorf("%s: want a %s, got %T", option, f.kind(), v)
		}
		if !c.Gives(option) {
			c.Given = append(c.Given, option)
		}
		return nil
	}
	return fmt.Errorf("%s: not an option of the settings (%s)", option, strings.Join(OptionNames(), ", "))
}

// Apply returns cur with the change made.
func (c SettingsChange) Apply(cur Settings) Settings {
	next := cur
	to := c.To
	nf, tf := next.fields(), to.fields()
	for i, f := range nf {
		if !c.Gives(f.option) {
			continue
		}
		switch t := tf[i]; {
		case f.num != nil:
			*f.num = *t.num
		case f.text != nil:
			*f.text = *t.text
		case f.params != nil:
			if *t.params == nil {
				continue
			}
			merged := map[string]string{}
			for k, v := range *f.params {
				merged[k] = v
			}
			for k, v := range *t.params {
				merged[k] = v
			}
			*f.params = merged
		default:
			*f.list = *t.list
		}
	}
	return next
}

// ConfigEntry is one key of mongod's YAML configuration a change sets:
// Number for a KnobFloat, Text for a KnobString (always a string in the
// file) or a KnobMap (a parameter's value, whose YAML type is its text's).
type ConfigEntry struct {
	Key    string
	Type   KnobType
	Number float64
	Text   string
}

// ConfigEntries are the keys of mongod's YAML configuration the change
// sets, in the table's order, parameters by name; args have none.
func (c SettingsChange) ConfigEntries() []ConfigEntry {
	var out []ConfigEntry
	to := c.To
	for _, f := range to.fields() {
		key := OptionConfigKey(f.option)
		if !c.Gives(f.option) || key == "" {
			continue
		}
		switch {
		case f.num != nil:
			out = append(out, ConfigEntry{Key: key, Type: KnobFloat, Number: *f.num})
		case f.text != nil:
			out = append(out, ConfigEntry{Key: key, Type: KnobString, Text: *f.text})
		case f.params != nil:
			for _, n := range sortedKeys(*f.params) {
				out = append(out, ConfigEntry{Key: key + "." + n, Type: KnobMap, Text: (*f.params)[n]})
			}
		}
	}
	return out
}

// ReadSettings reads settings from a mongod configuration document (a
// YAML config file, getCmdLineOpts' parsed options) at each option's
// config key: value gives a scalar's text by dotted key, params the
// parameters of the setParameter section (nil: not read). A number that
// does not parse is an error naming its key; the rest is read all the
// same.
func ReadSettings(value func(key string) (string, bool), params func(key string) map[string]string) (Settings, error) {
	var s Settings
	var errs []error
	for _, f := range s.fields() {
		key := OptionConfigKey(f.option)
		if key == "" {
			continue
		}
		switch {
		case f.num != nil:
			if v, ok := value(key); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s %q: not a number", key, v))
				}
				*f.num = n
			}
		case f.text != nil:
			*f.text, _ = value(key)
		case f.params != nil && params != nil:
			*f.params = params(key)
		}
	}
	return s, errors.Join(errs...)
}

// Value is the value the settings give an option, a server parameter or a
// top-level key of engineConfig, named in any case ("cacheSizeGB",
// "wiredTigerConcurrentReadTransactions", "eviction_target"), as a
// playbook writes it; false when the settings do not give it.
func (s Settings) Value(name string) (string, bool) {
	for _, f := range s.fields() {
		if !strings.EqualFold(f.option, name) || !f.given() {
			continue
		}
		switch {
		case f.num != nil:
			return formatFloat(*f.num), true
		case f.text != nil:
			return *f.text, true
		}
	}
	for _, n := range sortedKeys(s.SetParameters) {
		if strings.EqualFold(n, name) {
			return s.SetParameters[n], true
		}
	}
	if s.EngineConfig != "" {
		if pairs, err := SplitWTConfig(s.EngineConfig); err == nil {
			for _, p := range pairs {
				if strings.EqualFold(p[0], name) {
					return p[1], true
				}
			}
		}
	}
	return "", false
}
