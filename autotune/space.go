package autotune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine"
	"wtd/engine/tune"
	"wtd/hostctl"
)

// Range is one knob of a search and the values it is searched over.
type Range struct {
	Knob   string // a name of the knob table
	Lo, Hi float64
	Log    bool // search on a log scale
}

// Tunable are the knobs a search can turn: the numeric rows of the knob
// table, in its order.
func Tunable() []string {
	var out []string
	for _, k := range hostctl.Knobs {
		if k.Type == hostctl.KnobInt || k.Type == hostctl.KnobFloat {
			out = append(out, k.Name)
		}
	}
	return out
}

// knobOf returns the row of a knob a search may turn, or an error that
// lists the knobs it may.
func knobOf(name string) (hostctl.Knob, error) {
	k, ok := hostctl.KnobNamed(name)
	if !ok {
		return k, fmt.Errorf("no knob %q: tune turns %s (wtd knobs describes them)", name, strings.Join(Tunable(), ", "))
	}
	if k.Type != hostctl.KnobInt && k.Type != hostctl.KnobFloat {
		return k, fmt.Errorf("%s is a %s knob: tune searches numbers only (%s)", k.Name, k.Type, strings.Join(Tunable(), ", "))
	}
	return k, nil
}

// percentOrBytes says whether a knob's values up to 100 are percentages
// and above it bytes (WiredTiger's eviction targets and triggers).
func percentOrBytes(k hostctl.Knob) bool { return strings.Contains(k.Units, "over 100: bytes") }

// NewSpace checks the ranges against the knob table and returns the
// search space: each range within its knob's range (refused in mongod's or
// WiredTiger's words), integer knobs searched as integers, and the table's
// rules between the knobs searched as the space's constraints.
func NewSpace(ranges []Range) (*tune.Space, error) {
	if len(ranges) == 0 {
		return nil, errors.New("no knobs to tune")
	}
	var knobs []tune.Knob
	var errs []error
	searched := map[string]bool{}
	for _, r := range ranges {
		k, err := knobOf(r.Knob)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if searched[k.Name] {
			errs = append(errs, fmt.Errorf("%s is given twice", k.Name))
			continue
		}
		searched[k.Name] = true
		if err := checkRange(k, r); err != nil {
			errs = append(errs, err)
			continue
		}
		knobs = append(knobs, tune.Knob{Name: k.Name, Lo: r.Lo, Hi: r.Hi, Integer: k.Type == hostctl.KnobInt, Log: r.Log})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var cons []tune.Constraint
	for _, rule := range hostctl.KnobRules {
		if searched[rule.Lower] && searched[rule.Upper] {
			cons = append(cons, tune.Constraint{Lower: rule.Lower, Upper: rule.Upper, Strict: rule.Strict})
		}
	}
	return tune.NewSpace(knobs, cons)
}

// checkRange checks a search range against the knob's row.
func checkRange(k hostctl.Knob, r Range) error {
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || r.Lo >= r.Hi {
		return fmt.Errorf("%s {%s, %s}: want {low, high} with low < high", k.Name, num(r.Lo), num(r.Hi))
	}
	for _, v := range []float64{r.Lo, r.Hi} {
		if k.ZeroKeeps && v == 0 && k.Min != nil && *k.Min > 0 {
			// 0 means "the default" to mongod, not a value to search.
			return fmt.Errorf("%s %s: %s must be greater than or equal to %s", k.Name, num(v), k.Subject, num(*k.Min))
		}
		if err := k.Check(v); err != nil {
			return err
		}
	}
	if percentOrBytes(k) && r.Lo <= 100 && r.Hi > 100 {
		return fmt.Errorf("%s {%s, %s}: its values up to 100 are percentages of the cache and above 100 bytes: search one or the other", k.Name, num(r.Lo), num(r.Hi))
	}
	if r.Log && (r.Lo <= 0 || (k.Type == hostctl.KnobInt && r.Lo < 1)) {
		return fmt.Errorf("%s {%s, %s} log = true: a log scale needs low above 0 (at least 1 for a whole-number knob)", k.Name, num(r.Lo), num(r.Hi))
	}
	return nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// checkFixed checks the rules between a searched knob and one the search
// does not turn, whose value is the baseline's: a range that would break
// such a rule is refused before anything runs.
func checkFixed(space *tune.Space, base tune.Settings) error {
	ranges := map[string]tune.Knob{}
	for _, k := range space.Knobs() {
		ranges[k.Name] = k
	}
	var errs []error
	for _, rule := range hostctl.KnobRules {
		lo, loSearched := ranges[rule.Lower]
		hi, hiSearched := ranges[rule.Upper]
		switch {
		case loSearched && !hiSearched:
			fixed, ok := base[rule.Upper]
			if ok && (lo.Hi > fixed || (rule.Strict && lo.Hi == fixed)) {
				errs = append(errs, fmt.Errorf("%s up to %s would break %s (the server's %s is %s): tune %s too, or keep %s below it",
					rule.Lower, num(lo.Hi), rule, rule.Upper, num(fixed), rule.Upper, rule.Lower))
			}
		case hiSearched && !loSearched:
			fixed, ok := base[rule.Lower]
			if ok && (hi.Lo < fixed || (rule.Strict && hi.Lo == fixed)) {
				errs = append(errs, fmt.Errorf("%s down to %s would break %s (the server's %s is %s): tune %s too, or keep %s above it",
					rule.Upper, num(hi.Lo), rule, rule.Lower, num(fixed), rule.Lower, rule.Upper))
			}
		}
	}
	return errors.Join(errs...)
}

// ruleKnobs are the knobs the rules tie to the searched ones, whose
// baseline values the checks of checkFixed need.
func ruleKnobs(space *tune.Space) []string {
	in := map[string]bool{}
	for _, k := range space.Knobs() {
		in[k.Name] = true
	}
	var out []string
	for _, r := range hostctl.KnobRules {
		if in[r.Lower] && !in[r.Upper] {
			out = append(out, r.Upper)
		}
		if in[r.Upper] && !in[r.Lower] {
			out = append(out, r.Lower)
		}
	}
	return out
}

// inForce reads the values of knobs on s before the search: the cache's
// size from serverStatus, a parameter with getParameter, a WiredTiger key
// from the run's own runtime reconfigures of it, else from the startup
// configuration string, else the value mongod runs with by default
// (WiredTiger cannot be asked for its configuration).
func inForce(ctx context.Context, s *engine.Server, names []string) (tune.Settings, error) {
	out := tune.Settings{}
	var wt map[string]float64
	for _, name := range names {
		k := hostctl.MustKnob(name)
		switch {
		case k.Name == "cacheSizeGB":
			raw, err := s.ServerStatus(ctx)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", k.Name, err)
			}
			v, err := raw.LookupErr("wiredTiger", "cache", "maximum bytes configured")
			if err != nil {
				return nil, fmt.Errorf("read %s: serverStatus has no wiredTiger.cache.\"maximum bytes configured\"", k.Name)
			}
			f, ok := v.AsFloat64OK()
			if !ok {
				n, _ := v.AsInt64OK()
				f = float64(n)
			}
			out[k.Name] = math.Round(f/(1<<30)*1e4) / 1e4
		case k.Option == "engineConfig":
			if wt == nil {
				var err error
				if wt, err = startupWT(ctx, s); err != nil {
					return nil, err
				}
				for name, v := range s.RuntimeWTKnobs() {
					wt[name] = v
				}
			}
			v, ok := wt[k.Name]
			if !ok {
				d, err := strconv.ParseFloat(k.Default, 64)
				if err != nil {
					return nil, fmt.Errorf("read %s: the server's configuration does not set it and its default %q is not a number", k.Name, k.Default)
				}
				v = d
			}
			out[k.Name] = v
		case k.Parameter != "":
			v, err := s.GetParameter(ctx, k.Parameter)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", k.Name, err)
			}
			f, ok := number(v)
			if !ok {
				return nil, fmt.Errorf("read %s: getParameter gave %v, not a number", k.Name, v)
			}
			out[k.Name] = f
		default:
			return nil, fmt.Errorf("%s: tune cannot read its value on the server", k.Name)
		}
	}
	return out, nil
}

// startupWT reads the WiredTiger knobs of the server's startup
// configuration string (getCmdLineOpts).
func startupWT(ctx context.Context, s *engine.Server) (map[string]float64, error) {
	raw, err := s.Command(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}})
	if err != nil {
		return nil, fmt.Errorf("read the WiredTiger configuration: getCmdLineOpts: %w", err)
	}
	path := append([]string{"parsed"}, strings.Split(hostctl.OptionConfigKey("engineConfig"), ".")...)
	v, err := raw.LookupErr(path...)
	if err != nil {
		return map[string]float64{}, nil
	}
	cfg, _ := v.StringValueOK()
	vals, err := hostctl.WTKnobValues(cfg)
	if err != nil {
		return nil, fmt.Errorf("read the WiredTiger configuration %q: %w", cfg, err)
	}
	return vals, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// applier puts settings on a server: the knobs that need a restart by a
// restart (only when one of them changes), then every runtime knob, each
// through the path the table gives (one reconfigure for the WiredTiger
// keys, a setParameter each for the others).
type applier struct {
	s       *engine.Server
	current tune.Settings // the restart knobs' values in force
	keep    bool
}

// needsRestart reports whether a search over names restarts the server.
func needsRestart(names []string) bool {
	for _, n := range names {
		if hostctl.MustKnob(n).Restart {
			return true
		}
	}
	return false
}

func (a *applier) apply(ctx context.Context, set tune.Settings) error {
	var restart hostctl.SettingsChange
	restarting := false
	for _, name := range sortedNames(set) {
		k := hostctl.MustKnob(name)
		if !k.Restart || a.current[name] == set[name] {
			continue
		}
		if err := restart.Set(k.Option, set[name]); err != nil {
			return err
		}
		restarting = true
	}
	if restarting {
		if err := a.s.Restart(ctx, engine.ServerChanges{SettingsChange: restart, Keep: a.keep}); err != nil {
			return err
		}
		for name, v := range set {
			if hostctl.MustKnob(name).Restart {
				a.current[name] = v
			}
		}
	}
	if cfg := wtConfig(set); cfg != "" {
		if err := a.s.ReconfigureKeep(ctx, cfg, a.keep); err != nil {
			return err
		}
	}
	for _, name := range sortedNames(set) {
		k := hostctl.MustKnob(name)
		if k.Restart || k.Option == "engineConfig" || k.Parameter == "" {
			continue
		}
		var v any = set[name]
		if k.Type == hostctl.KnobInt {
			v = int64(set[name])
		}
		if _, err := a.s.SetParameterKeep(ctx, k.Parameter, v, a.keep); err != nil {
			return err
		}
	}
	return nil
}

// wtConfig is the WiredTiger configuration string of the runtime
// WiredTiger knobs of set, nested keys grouped:
// "eviction_dirty_target=5,eviction=(threads_min=1,threads_max=4)".
func wtConfig(set tune.Settings) string {
	var parts []string
	nested := map[string][]string{}
	var parents []string
	for _, k := range hostctl.Knobs { // the table's order
		v, ok := set[k.Name]
		if !ok || k.Option != "engineConfig" || k.Restart {
			continue
		}
		val := strconv.FormatFloat(v, 'f', -1, 64)
		if parent, child, ok := strings.Cut(k.WTKey, "."); ok {
			if nested[parent] == nil {
				parents = append(parents, parent)
			}
			nested[parent] = append(nested[parent], child+"="+val)
		} else {
			parts = append(parts, k.WTKey+"="+val)
		}
	}
	for _, p := range parents {
		parts = append(parts, p+"=("+strings.Join(nested[p], ",")+")")
	}
	return strings.Join(parts, ",")
}

func sortedNames(set tune.Settings) []string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SettingsText words settings as a step label and a verdict name them,
// in the order of the space: "eviction_dirty_target=5 checkpoint.wait=60".
func SettingsText(space *tune.Space, set tune.Settings) string {
	var parts []string
	for _, k := range space.Knobs() {
		if v, ok := set[k.Name]; ok {
			parts = append(parts, k.Name+"="+num(v))
		}
	}
	return strings.Join(parts, " ")
}
