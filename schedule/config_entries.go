package schedule

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"wtd/hostctl"
)

func (c *Config) readSchedule(item node) (Schedule, error) {
	f, err := item.fields("a schedule", "name", "cron", "playbook", "params", "timeout", "catch_up")
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{Line: item.n.Line}
	if s.Name, err = readName(f, item, "schedule", func(n string) bool { _, ok := c.Schedule(n); return ok }); err != nil {
		return Schedule{}, err
	}
	what := "schedule " + s.Name
	if s.Cron, s.Spec, err = readCron(f, item, what); err != nil {
		return Schedule{}, err
	}
	n, ok := f["playbook"]
	if !ok {
		return Schedule{}, item.errf("%s: playbook is required", what)
	}
	pb, err := n.str(what + " playbook")
	if err != nil {
		return Schedule{}, err
	}
	s.Playbook = c.resolve(pb)
	s.Params, s.Overrides = map[string]any{}, map[string]string{}
	if n, ok := f["params"]; ok {
		if err := readParams(n, what, s.Params, s.Overrides); err != nil {
			return Schedule{}, err
		}
	}
	if n, ok := f["timeout"]; ok {
		if s.Timeout, err = n.duration(what+" timeout", 1); err != nil {
			return Schedule{}, err
		}
	}
	if n, ok := f["catch_up"]; ok {
		if s.CatchUp, err = n.duration(what+" catch_up", 1); err != nil {
			return Schedule{}, err
		}
	}
	return s, nil
}

// readParams reads params: { name: value } where a value is a number,
// boolean, string or a list of numbers or strings, into the values and
// the -p strings (lists as comma lists).
func readParams(n node, what string, values map[string]any, overrides map[string]string) error {
	f, err := n.anyFields(what + " params")
	if err != nil {
		return err
	}
	for _, kv := range f {
		name, v := kv.key, kv.value
		if v.n.Kind == yaml.SequenceNode {
			items, _ := v.items(what + " params." + name)
			var list []any
			var strs []string
			for _, it := range items {
				x, err := it.scalar(what + " params." + name + " entry")
				if err != nil {
					return err
				}
				s := formatParam(x)
				if strings.Contains(s, ",") {
					return it.errf("%s params.%s: list entry %q may not contain a comma", what, name, s)
				}
				list, strs = append(list, x), append(strs, s)
			}
			values[name], overrides[name] = list, strings.Join(strs, ",")
			continue
		}
		x, err := v.scalar(what + " params." + name)
		if err != nil {
			return err
		}
		values[name], overrides[name] = x, formatParam(x)
	}
	return nil
}

func formatParam(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func (c *Config) readWindow(item node) (Window, error) {
	f, err := item.fields("a window", "name", "cron", "duration", "server", "open", "close", "leave_open")
	if err != nil {
		return Window{}, err
	}
	w := Window{Line: item.n.Line}
	if w.Name, err = readName(f, item, "window", func(n string) bool { _, ok := c.Window(n); return ok }); err != nil {
		return Window{}, err
	}
	what := "window " + w.Name
	if w.Cron, w.Spec, err = readCron(f, item, what); err != nil {
		return Window{}, err
	}
	n, ok := f["duration"]
	if !ok {
		return Window{}, item.errf("%s: duration is required", what)
	}
	if w.Duration, err = n.duration(what+" duration", 1); err != nil {
		return Window{}, err
	}
	if gap := shortestGap(w.Spec, 5); gap > 0 && w.Duration >= gap {
		return Window{}, n.errf("%s: duration %s is not shorter than the %s between two openings: the window would never close", what, w.Duration, gap)
	}
	n, ok = f["server"]
	if !ok {
		return Window{}, item.errf("%s: server is required (mongodb://127.0.0.1:PORT, a server that runs already)", what)
	}
	if w.Server, err = n.str(what + " server"); err != nil {
		return Window{}, err
	}
	if _, err := hostctl.CheckURI(w.Server); err != nil {
		return Window{}, n.errf("%s server: %v", what, err)
	}
	for _, side := range []struct {
		key string
		dst *[]Param
	}{{"open", &w.Open}, {"close", &w.Close}} {
		n, ok := f[side.key]
		if !ok {
			return Window{}, item.errf("%s: %s is required ({ setParameter: { name: value } })", what, side.key)
		}
		if *side.dst, err = readSetParameter(n, what+" "+side.key); err != nil {
			return Window{}, err
		}
	}
	if n, ok := f["leave_open"]; ok {
		if w.LeaveOpen, err = n.boolean(what + " leave_open"); err != nil {
			return Window{}, err
		}
	}
	return w, nil
}

// readSetParameter reads { setParameter: { name: value, ... } }, in order.
func readSetParameter(n node, what string) ([]Param, error) {
	f, err := n.fields(what, "setParameter")
	if err != nil {
		return nil, err
	}
	sp, ok := f["setParameter"]
	if !ok {
		return nil, n.errf("%s: setParameter is required", what)
	}
	kvs, err := sp.anyFields(what + " setParameter")
	if err != nil {
		return nil, err
	}
	if len(kvs) == 0 {
		return nil, sp.errf("%s setParameter names no parameter", what)
	}
	var out []Param
	for _, kv := range kvs {
		v, err := kv.value.scalar(what + " setParameter." + kv.key)
		if err != nil {
			return nil, err
		}
		out = append(out, Param{Name: kv.key, Value: v})
	}
	return out, nil
}

// keyValue is one entry of a mapping with free keys.
type keyValue struct {
	key   string
	value node
}

// anyFields reads a mapping of free keys, in order; a repeated key is an
// error.
func (y node) anyFields(what string) ([]keyValue, error) {
	if y.n.Kind != yaml.MappingNode {
		return nil, y.errf("%s must be a mapping (name: value), got %s", what, kindName(y.n))
	}
	var out []keyValue
	seen := map[string]bool{}
	for i := 0; i+1 < len(y.n.Content); i += 2 {
		k := y.n.Content[i]
		if seen[k.Value] {
			return nil, node{y.file, k}.errf("%s: %s given twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, keyValue{k.Value, node{y.file, y.n.Content[i+1]}})
	}
	return out, nil
}

// Schedule returns the schedule called name.
func (c *Config) Schedule(name string) (Schedule, bool) {
	for _, s := range c.Schedules {
		if s.Name == name {
			return s, true
		}
	}
	return Schedule{}, false
}

// Window returns the window called name.
func (c *Config) Window(name string) (Window, bool) {
	for _, w := range c.Windows {
		if w.Name == name {
			return w, true
		}
	}
	return Window{}, false
}
