package hostctl

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The knobs wtd can turn on a server, one row each: how a playbook names
// it, how mongod takes it (command-line flag, YAML config key,
// setParameter name, WiredTiger configuration key), its type, range and
// default, whether it needs a restart and how to read the value in force.
// Every check and message of a setting comes from this table, and so do
// the options of mongod.start and m:restart; `wtd knobs` prints it.
//
// Ranges are mongod 4.4's option and parameter validators
// (mongod_options_storage.idl, wiredtiger_global_options.idl, the ticket
// validators of mongod 7.0) and WiredTiger 3.2.1's wiredtiger_open
// documentation. "Default" is what mongod runs with when the knob is not
// given: mongod passes its own eviction threads in the configuration it
// opens WiredTiger with; WTDefault is WiredTiger's own default.

// KnobType is the type of a knob's value.
type KnobType string

// Knob types.
const (
	KnobFloat  KnobType = "float"
	KnobInt    KnobType = "int"
	KnobBool   KnobType = "bool"
	KnobEnum   KnobType = "enum"
	KnobString KnobType = "string" // a WiredTiger configuration string
	KnobMap    KnobType = "map"    // name = value pairs (setParameter)
	KnobList   KnobType = "list"   // command-line words (args)
)

// KnobWords is how mongod or WiredTiger words a value out of range.
type KnobWords int

// Ways of wording a value out of range.
const (
	// WordsBounds: "<subject> must be greater than or equal to <min>"
	// (mongod's IDL validators).
	WordsBounds KnobWords = iota
	// WordsRange: "<subject> out of allowed range (<min>-<max>)".
	WordsRange
	// WordsWiredTiger: "Value too small for key '<subject>' the minimum
	// is <min>" (WiredTiger's configuration checks).
	WordsWiredTiger
)

// Knob is one row of the table.
type Knob struct {
	// Name is how a playbook names the knob: an option of mongod.start
	// and m:restart, a key inside engineConfig ("eviction.threads_min"),
	// or a setParameter name.
	Name string `json:"name"`
	// Option is the mongod.start / m:restart option that carries it
	// (cacheSizeGB, engineConfig, syncdelay, setParameter, args).
	Option string `json:"option"`
	// Flag is mongod's command-line flag, without dashes.
	Flag string `json:"flag,omitempty"`
	// ConfigKey is the key of mongod's YAML configuration file.
	ConfigKey string `json:"config_key,omitempty"`
	// Parameter is the setParameter name; Aliases are its other names
	// across mongod versions.
	Parameter string   `json:"parameter,omitempty"`
	Aliases   []string `json:"aliases,omitempty"`
	// WTKey is the WiredTiger configuration key (wiredtiger_open,
	// WT_CONNECTION::reconfigure), dotted for a nested one.
	WTKey string   `json:"wt_key,omitempty"`
	Type  KnobType `json:"type"`
	// Min and Max bound a number; nil is unbounded.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Values are an enum's values.
	Values []string `json:"values,omitempty"`
	Units  string   `json:"units,omitempty"`
	// ZeroKeeps is true when 0 means "not given, keep the default" (it is
	// not checked against the range).
	ZeroKeeps bool `json:"zero_keeps_default,omitempty"`
	// Default is what mongod runs with when the knob is not given;
	// WTDefault is WiredTiger's own default where it differs or applies.
	Default   string `json:"default"`
	WTDefault string `json:"wt_default,omitempty"`
	// Restart is true when a new value takes a restart; Runtime says how
	// the value changes on a running server, when it can.
	Restart bool   `json:"restart"`
	Runtime string `json:"runtime,omitempty"`
	// InForce is how to read the value in force.
	InForce string `json:"in_force"`
	// Subject and Words are how an out-of-range value is worded.
	Subject string    `json:"-"`
	Words   KnobWords `json:"-"`
	Doc     string    `json:"doc"`
	// Smaller says how to get a value below Min another way, added to
	// the refusal of one ("" when there is no other way).
	Smaller string `json:"smaller,omitempty"`
}

// KnobRule is a constraint between two knobs: Lower < Upper (Strict) or
// Lower <= Upper, checked when both are given.
type KnobRule struct {
	Lower  string `json:"lower"`
	Upper  string `json:"upper"`
	Strict bool   `json:"strict"`
}

func (r KnobRule) String() string {
	if r.Strict {
		return r.Lower + " < " + r.Upper
	}
	return r.Lower + " <= " + r.Upper
}

func bound(v float64) *float64 { return &v }

const (
	wtTB         = 10 << 40 // WiredTiger's "10TB" maximum
	wtRuntimeSet = `setParameter wiredTigerEngineRuntimeConfig="%s" (WT_CONNECTION::reconfigure)`
	wtInForce    = "getCmdLineOpts parsed.storage.wiredTiger.engineConfig.configString, else the default; runtime changes are the ones recorded (WiredTiger cannot be asked)"
	ticketsWords = "setParameter %[1]s N at runtime, or --setParameter %[1]s=N"
)

// Knobs is the table, in the order `wtd knobs` prints it.
var Knobs = []Knob{
	{Name: "cacheSizeGB", Option: "cacheSizeGB", Flag: "wiredTigerCacheSizeGB", ConfigKey: "storage.wiredTiger.engineConfig.cacheSizeGB",
		WTKey: "cache_size", Type: KnobFloat, Min: bound(0.25), Max: bound(10000), Units: "GB", ZeroKeeps: true,
		Default: "50% of (RAM - 1 GB), at least 0.25", WTDefault: "100MB", Restart: true,
		Runtime: `WiredTiger's cache_size through wiredTigerEngineRuntimeConfig (not this option)`,
		InForce: `serverStatus wiredTiger.cache."maximum bytes configured"`,
		Subject: "storage.wiredTiger.engineConfig.cacheSizeGB", Words: WordsBounds,
		Doc:     "size of WiredTiger's cache",
		Smaller: `for a smaller cache give WiredTiger's own size instead: engineConfig = "cache_size=100MB" (WiredTiger takes 1MB and up)`},
	wtKnob("eviction_target", 10, wtTB, "80", "80", "% (over 100: bytes)", "eviction worker threads start when the cache holds this much (a percentage up to 100, else bytes)"),
	wtKnob("eviction_trigger", 10, wtTB, "95", "95", "% (over 100: bytes)", "application threads evict too when the cache holds this much"),
	wtKnob("eviction_dirty_target", 1, wtTB, "5", "5", "% (over 100: bytes)", "eviction worker threads start when the cache holds this much dirty data"),
	wtKnob("eviction_dirty_trigger", 1, wtTB, "20", "20", "% (over 100: bytes)", "application threads evict too when the cache holds this much dirty data"),
	wtKnob("eviction_checkpoint_target", 0, wtTB, "1", "1", "% (over 100: bytes)", "eviction at the start of a checkpoint brings dirty data down to this much (0: none)"),
	wtKnob("eviction.threads_min", 1, 20, "4", "1", "threads", "eviction worker threads always running"),
	wtKnob("eviction.threads_max", 1, 20, "4", "8", "threads", "eviction worker threads at most"),
	wtKnob("checkpoint.wait", 0, 100000, "0", "0", "s", "WiredTiger's own checkpoint interval (0: none; mongod checkpoints every syncdelay)"),
	wtKnob("checkpoint.log_size", 0, 2<<30, "0", "0", "bytes", "checkpoint after this much log (0: never)"),
	wtKnob("file_manager.close_idle_time", 0, 100000, "100000", "30", "s", "seconds a file handle stays idle before WiredTiger closes it (0: never)"),
	{Name: "syncdelay", Option: "syncdelay", Flag: "syncdelay", ConfigKey: "storage.syncPeriodSecs", Parameter: "syncdelay",
		Type: KnobFloat, Min: bound(0), Max: bound(MaxSyncDelay), Units: "s", ZeroKeeps: true, Default: "60",
		Runtime: "setParameter syncdelay N", InForce: "getParameter syncdelay",
		Subject: "syncdelay", Words: WordsRange,
		Doc: "seconds between mongod's checkpoints (0: none)"},
	ticketKnob("Read"),
	ticketKnob("Write"),
	{Name: "storageEngineConcurrencyAdjustmentAlgorithm", Option: "setParameter", Parameter: "storageEngineConcurrencyAdjustmentAlgorithm",
		Aliases: []string{"executionControlConcurrencyAdjustmentAlgorithm"}, Type: KnobEnum,
		Values: []string{"fixedConcurrentTransactions", "throughputProbing"}, Default: "throughputProbing (mongod 7.0 and later)",
		Restart: true, InForce: "getParameter storageEngineConcurrencyAdjustmentAlgorithm",
		Doc: "how mongod sizes the ticket pools: fixed at the configured numbers, or probed up to them"},
	{Name: "enableMajorityReadConcern", Option: "args", Flag: "enableMajorityReadConcern", ConfigKey: "replication.enableMajorityReadConcern",
		Type: KnobBool, Default: "true", Restart: true, InForce: "getCmdLineOpts parsed.replication.enableMajorityReadConcern, else the default",
		Doc: `keep the history majority reads need (args = {"--enableMajorityReadConcern=false"}; always true from mongod 5.0)`},
}

// KnobRules are the constraints between knobs.
var KnobRules = []KnobRule{
	{Lower: "eviction_target", Upper: "eviction_trigger", Strict: true},
	{Lower: "eviction_dirty_target", Upper: "eviction_dirty_trigger", Strict: true},
	{Lower: "eviction.threads_min", Upper: "eviction.threads_max"},
}

// wtKnob is a WiredTiger key playbooks give in engineConfig (at start) or
// wiredTigerEngineRuntimeConfig (at runtime).
func wtKnob(key string, min, max float64, def, wtDef, units, doc string) Knob {
	return Knob{Name: key, Option: "engineConfig", Flag: "wiredTigerEngineConfigString",
		ConfigKey: "storage.wiredTiger.engineConfig.configString", WTKey: key, Type: KnobInt,
		Min: bound(min), Max: bound(max), Units: units, Default: def, WTDefault: wtDef,
		Runtime: fmt.Sprintf(wtRuntimeSet, wtAssign(key, "N")), InForce: wtInForce,
		Subject: key, Words: WordsWiredTiger, Doc: doc}
}

// wtAssign writes a dotted key set to value as WiredTiger nests it:
// "eviction.threads_min" is "eviction=(threads_min=N)".
func wtAssign(key, value string) string {
	if parent, child, ok := strings.Cut(key, "."); ok {
		return parent + "=(" + child + "=" + value + ")"
	}
	return key + "=" + value
}

// ticketKnob is the read or write ticket pool's size.
func ticketKnob(kind string) Knob {
	name := "wiredTigerConcurrent" + kind + "Transactions"
	return Knob{Name: name, Option: "setParameter", Parameter: name,
		Aliases: []string{"storageEngineConcurrent" + kind + "Transactions", "executionControlConcurrent" + kind + "Transactions"},
		Type:    KnobInt, Min: bound(5), Units: "tickets", Default: "128",
		Runtime: fmt.Sprintf(ticketsWords, name), InForce: "getParameter " + name,
		Subject: "Concurrent " + strings.ToLower(kind) + " transactions limit", Words: WordsBounds,
		Doc: "the most " + strings.ToLower(kind) + " operations in WiredTiger at once"}
}

// KnobNamed returns the row a playbook's name, setParameter name (or
// alias) or WiredTiger key names, compared without regard to case.
func KnobNamed(name string) (Knob, bool) {
	for _, k := range Knobs {
		if strings.EqualFold(k.Name, name) || (k.Parameter != "" && strings.EqualFold(k.Parameter, name)) {
			return k, true
		}
		for _, a := range k.Aliases {
			if strings.EqualFold(a, name) {
				return k, true
			}
		}
	}
	return Knob{}, false
}

// MustKnob returns the row of a name wtd's own code gives; it panics on a
// name the table does not hold.
func MustKnob(name string) Knob {
	k, ok := KnobNamed(name)
	if !ok {
		panic("hostctl: no knob " + name)
	}
	return k
}

// WTDefaults are the values mongod runs with for the table's WiredTiger
// keys, by top-level key, as a configuration string writes them:
// "eviction_target": "80", "eviction": "(threads_min=4,threads_max=4)".
func WTDefaults() map[string]string {
	out := map[string]string{}
	nested := map[string][]string{}
	for _, k := range Knobs {
		if k.Option != "engineConfig" || k.WTKey == "" {
			continue
		}
		if parent, child, ok := strings.Cut(k.WTKey, "."); ok {
			nested[parent] = append(nested[parent], child+"="+k.Default)
		} else {
			out[k.WTKey] = k.Default
		}
	}
	for parent, kvs := range nested {
		out[parent] = "(" + strings.Join(kvs, ",") + ")"
	}
	return out
}

// SettingOptions are the options of mongod.start and m:restart that
// carry knobs, in table order (args aside).
func SettingOptions() []string {
	var out []string
	seen := map[string]bool{"args": true}
	for _, k := range Knobs {
		if !seen[k.Option] {
			seen[k.Option] = true
			out = append(out, k.Option)
		}
	}
	return out
}

// settingOptionsText lists SettingOptions as a message does:
// "cacheSizeGB, engineConfig, syncdelay or setParameter".
func settingOptionsText(last string) string {
	o := SettingOptions()
	if len(o) < 2 {
		return strings.Join(o, "")
	}
	return strings.Join(o[:len(o)-1], ", ") + last + o[len(o)-1]
}

// SettingOptionsOr is "cacheSizeGB, engineConfig, syncdelay or
// setParameter".
func SettingOptionsOr() string { return settingOptionsText(" or ") }

// knobFlagRefusals say which option to use instead of a flag that carries
// one of SettingOptions: "use cacheSizeGB = N", `use engineConfig = "..."`.
func knobFlagRefusals() map[string]string {
	out := map[string]string{}
	for _, k := range Knobs {
		switch {
		case k.Flag == "" || k.Option == "args" || k.Option == "setParameter":
		case k.Type == KnobInt || k.Type == KnobFloat:
			if k.Option == k.Name {
				out[strings.ToLower(k.Flag)] = "use " + k.Name + " = N"
			} else {
				out[strings.ToLower(k.Flag)] = "use " + k.Option + ` = "..."`
			}
		}
	}
	return out
}

// Check checks a value of a numeric knob against its range, in mongod's
// or WiredTiger's words: "cacheSizeGB 0.1:
// storage.wiredTiger.engineConfig.cacheSizeGB must be greater than or
// equal to 0.25".
func (k Knob) Check(v float64) error {
	if k.ZeroKeeps && v == 0 {
		return nil
	}
	bad := func(words string) error { return fmt.Errorf("%s %s: %s", k.Name, formatFloat(v), words) }
	if k.Type == KnobInt && !math.IsNaN(v) && v != math.Trunc(v) {
		return bad(k.Subject + " must be an integer")
	}
	switch k.Words {
	case WordsRange:
		if math.IsNaN(v) || (k.Min != nil && v < *k.Min) || (k.Max != nil && v > *k.Max) {
			return bad(fmt.Sprintf("%s out of allowed range (%s-%s)", k.Subject, formatFloat(*k.Min), formatFloat(*k.Max)))
		}
	case WordsWiredTiger:
		if math.IsNaN(v) {
			return bad(fmt.Sprintf("Value for key '%s' is not a number", k.Subject))
		}
		if k.Min != nil && v < *k.Min {
			return bad(fmt.Sprintf("Value too small for key '%s' the minimum is %s", k.Subject, formatFloat(*k.Min)))
		}
		if k.Max != nil && v > *k.Max {
			return bad(fmt.Sprintf("Value too large for key '%s' the maximum is %s", k.Subject, formatFloat(*k.Max)))
		}
	default:
		if math.IsNaN(v) {
			return bad(k.Subject + " must be a number")
		}
		if k.Min != nil && v < *k.Min {
			msg := fmt.Sprintf("%s must be greater than or equal to %s", k.Subject, formatFloat(*k.Min))
			if k.Smaller != "" {
				msg += "; " + k.Smaller
			}
			return bad(msg)
		}
		if k.Max != nil && v > *k.Max {
			return bad(fmt.Sprintf("%s must be less than or equal to %s", k.Subject, formatFloat(*k.Max)))
		}
	}
	return nil
}

// CheckText checks a value written as text (a setParameter value, a
// WiredTiger number such as "2GB").
func (k Knob) CheckText(s string) error {
	switch k.Type {
	case KnobEnum:
		for _, v := range k.Values {
			if s == v {
				return nil
			}
		}
		return fmt.Errorf("%s %q: Enumeration value '%s' for field '%s' is not a valid value (one of %s)",
			k.Name, s, s, k.Name, strings.Join(k.Values, ", "))
	case KnobBool:
		if s != "true" && s != "false" && s != "1" && s != "0" {
			return fmt.Errorf("%s %q: must be true or false", k.Name, s)
		}
		return nil
	case KnobInt, KnobFloat:
		v, err := parseKnobNumber(s, k.WTKey != "")
		if err != nil {
			return fmt.Errorf("%s %q: must be a number", k.Name, s)
		}
		return k.Check(v)
	}
	return nil
}

// parseKnobNumber reads a number, with WiredTiger's size suffixes (B,
// KB, MB, GB, TB, PB) when wt is true.
func parseKnobNumber(s string, wt bool) (float64, error) {
	mult := 1.0
	if wt {
		u := strings.ToUpper(s)
		for i, suf := range []string{"KB", "MB", "GB", "TB", "PB"} {
			if strings.HasSuffix(u, suf) {
				mult, s = math.Pow(1024, float64(i+1)), s[:len(s)-2]
				break
			}
		}
		if mult == 1 && strings.HasSuffix(u, "B") {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v * mult, err
}

// CheckKnobs checks values by knob name: each against its row, then the
// rules between those given. It is the one check of a set of knob values
// (a playbook's settings, a tuner's candidate).
func CheckKnobs(values map[string]float64) error {
	var errs []error
	byName := map[string]float64{}
	for _, name := range sortedFloatKeys(values) {
		k, ok := KnobNamed(name)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no such knob (wtd knobs lists them)", name))
			continue
		}
		if err := k.Check(values[name]); err != nil {
			errs = append(errs, err)
			continue
		}
		byName[k.Name] = values[name]
	}
	return errors.Join(append(errs, checkRules(byName)...)...)
}

func sortedFloatKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkRules checks KnobRules among the values given.
func checkRules(values map[string]float64) []error {
	var errs []error
	for _, r := range KnobRules {
		lo, ok1 := values[r.Lower]
		hi, ok2 := values[r.Upper]
		if !ok1 || !ok2 || lo < hi || (!r.Strict && lo == hi) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s=%s, %s=%s: %s must hold", r.Lower, formatFloat(lo), r.Upper, formatFloat(hi), r))
	}
	return errs
}

// CheckWTKnobs checks the knobs a WiredTiger configuration string sets
// (engineConfig, wiredTigerEngineRuntimeConfig) against the table, and
// the rules between them. Keys the table does not hold are left to
// WiredTiger; a later value of a key overrides an earlier one, as in
// WiredTiger.
func CheckWTKnobs(cfg string) error {
	values := map[string]float64{}
	var errs []error
	var walk func(s, prefix string)
	walk = func(s, prefix string) {
		pairs, err := parseWTConfig(s)
		if err != nil {
			return // CheckWTConfig reports it
		}
		for _, p := range pairs {
			key := prefix + p.key.text
			if p.value.kind == wtStruct && len(p.value.text) >= 2 {
				walk(p.value.text[1:len(p.value.text)-1], key+".")
				continue
			}
			k, ok := wtKnob1(key)
			if !ok {
				continue
			}
			v, err := parseKnobNumber(p.value.text, true)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q: must be a number", k.Name, p.value.text))
				continue
			}
			if err := k.Check(v); err != nil {
				errs = append(errs, err)
				continue
			}
			values[k.Name] = v
		}
	}
	walk(cfg, "")
	return errors.Join(append(errs, checkRules(values)...)...)
}

// wtKnob1 returns the row of a WiredTiger key carried in engineConfig.
func wtKnob1(key string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Option == "engineConfig" && k.WTKey == key {
			return k, true
		}
	}
	return Knob{}, false
}

// checkParameterKnob checks the value of a setParameter the table holds.
func checkParameterKnob(name string, value any) error {
	k, ok := KnobNamed(name)
	if !ok || k.Parameter == "" {
		return nil
	}
	var err error
	switch v := value.(type) {
	case string:
		err = k.CheckText(v)
	case float64:
		err = k.Check(v)
	case int:
		err = k.Check(float64(v))
	case int64:
		err = k.Check(float64(v))
	case int32:
		err = k.Check(float64(v))
	case bool:
		err = k.CheckText(strconv.FormatBool(v))
	default:
		return nil
	}
	if err != nil && !strings.EqualFold(k.Name, name) {
		// Name the parameter as the playbook wrote it.
		return fmt.Errorf("%s (%s): %w", name, k.Name, err)
	}
	return err
}

// WTKnobValues returns the values a WiredTiger configuration string sets
// for the table's WiredTiger keys, by knob name ("eviction.threads_max"),
// sizes in bytes; keys the table does not hold are left out. A later
// value of a key overrides an earlier one, as in WiredTiger.
func WTKnobValues(cfg string) (map[string]float64, error) {
	values := map[string]float64{}
	var walk func(s, prefix string) error
	walk = func(s, prefix string) error {
		pairs, err := parseWTConfig(s)
		if err != nil {
			return err
		}
		for _, p := range pairs {
			key := prefix + p.key.text
			if p.value.kind == wtStruct && len(p.value.text) >= 2 {
				if err := walk(p.value.text[1:len(p.value.text)-1], key+"."); err != nil {
					return err
				}
				continue
			}
			k, ok := wtKnob1(key)
			if !ok {
				continue
			}
			v, err := parseKnobNumber(p.value.text, true)
			if err != nil {
				return fmt.Errorf("%s %q: must be a number", k.Name, p.value.text)
			}
			values[k.Name] = v
		}
		return nil
	}
	return values, walk(cfg, "")
}
