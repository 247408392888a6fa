package luabind

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// ParamError is a -p name=value the playbook cannot take: a name it does
// not declare, or a value that does not parse as its default's type.
type ParamError struct {
	Name string
	// Value is the value given with -p.
	Value string
	// Never is true when the playbook never calls params{} at all.
	Never bool
	// Want is the type the default gives the parameter ("number",
	// "boolean", "list of numbers", ...); empty for an unknown name.
	Want string
	// Default is the default as the playbook writes it (for a bad value).
	Default string
	// Known are the playbook's parameters, sorted (for an unknown name).
	Known []string
	// Unknown are all the names given that the playbook does not
	// declare, sorted (Name is the first); nil for a bad value.
	Unknown []string
}

// names words the unknown names: "x" (-p x=...), or for several
// parameters "x", "y" (-p x=..., -p y=...).
func (e *ParamError) names() string {
	unknown := e.Unknown
	if len(unknown) == 0 {
		unknown = []string{e.Name}
	}
	quoted, flags := make([]string, len(unknown)), make([]string, len(unknown))
	for i, n := range unknown {
		quoted[i], flags[i] = fmt.Sprintf("%q", n), "-p "+n+"=..."
	}
	word := "parameter"
	if len(unknown) > 1 {
		word = "parameters"
	}
	return fmt.Sprintf("unknown %s %s (%s)", word, strings.Join(quoted, ", "), strings.Join(flags, ", "))
}

func (e *ParamError) Error() string {
	if e.Want != "" {
		return fmt.Sprintf("parameter %s: -p %s=%s: %q is not a %s (the default is %s)", e.Name, e.Name, e.Value, e.Value, e.Want, e.Default)
	}
	if e.Never {
		return fmt.Sprintf("the playbook declares no parameters (it never calls params{}): -p %s=%s is not one", e.Name, e.Value)
	}
	if len(e.Known) == 0 {
		return e.names() + ": the playbook declares no parameters"
	}
	hint := ""
	if len(e.Unknown) <= 1 {
		hint = didYouMean(e.Name, e.Known)
	}
	return e.names() + ": the playbook's parameters are " + strings.Join(e.Known, ", ") + hint
}

func (b *binding) openParams(L *lua.LState) {
	L.SetGlobal("params", L.NewFunction(b.paramsDeclare))
}

// params{ name = default, ... } -> table of the final values
//
// Each default is a number, boolean, string or list of numbers or strings;
// a -p name=value override is parsed as the default's type (lists as
// comma lists: -p sizes=0.25,2). The final values are recorded with the
// run. params may be called once.
func (b *binding) paramsDeclare(L *lua.LState) int {
	decl := L.CheckTable(1)
	if b.paramsSet {
		raisef(L, "params: called twice: declare every parameter in one params{...}")
	}
	defaults := map[string]lua.LValue{}
	var names []string
	decl.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok {
			raisef(L, "params: parameter names must be strings, got %s (write params{ name = default, ... })", describe(k))
		}
		if _, err := paramKind(v); err != nil {
			raisef(L, "params: %s: %v", ks, err)
		}
		defaults[string(ks)] = v
		names = append(names, string(ks))
	})
	sort.Strings(names)
	if err := b.unknownParam(names); err != nil {
		b.raise(L, "params", err)
	}
	final := map[string]any{}
	out := L.NewTable()
	for _, name := range names {
		def := defaults[name]
		v := def
		if raw, ok := b.env.Overrides[name]; ok {
			parsed, err := parseParam(L, name, def, raw)
			if err != nil {
				b.raise(L, "params", err)
			}
			v = parsed
		} else if t, ok := def.(*lua.LTable); ok {
			v = copyList(L, t)
		}
		g, _ := fromLua(v)
		if t, ok := v.(*lua.LTable); ok && t.Len() == 0 {
			g = []any{}
		}
		final[name] = g
		out.RawSetString(name, v)
		kind, _ := paramKind(def)
		dv, _ := fromLua(def)
		if t, ok := def.(*lua.LTable); ok && t.Len() == 0 {
			dv = []any{}
		}
		b.declared = append(b.declared, Param{Name: name, Type: kind, Default: dv})
	}
	b.params, b.paramsSet = final, true
	if b.checking && b.dry == nil {
		b.stopCheck(L)
	}
	if err := b.run.SetParams(b.ctx, final); err != nil {
		b.raise(L, "params", err)
	}
	L.Push(out)
	return 1
}

// unknownParam returns a *ParamError for the first override (sorted) that
// is not among names.
func (b *binding) unknownParam(names []string) error {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	var unknown []string
	for n := range b.env.Overrides {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return &ParamError{Name: unknown[0], Value: b.env.Overrides[unknown[0]], Known: names, Unknown: unknown}
}

// paramKind names the type a default gives its parameter.
func paramKind(def lua.LValue) (string, error) {
	switch v := def.(type) {
	case lua.LNumber:
		return "number", nil
	case lua.LBool:
		return "boolean", nil
	case lua.LString:
		return "string", nil
	case *lua.LTable:
		if !isList(v) {
			return "", fmt.Errorf("a table default must be a list {a, b, ...}")
		}
		kind := ""
		for i := 1; i <= v.Len(); i++ {
			var k string
			switch v.RawGetInt(i).(type) {
			case lua.LNumber:
				k = "list of numbers"
			case lua.LString:
				k = "list of strings"
			default:
				return "", fmt.Errorf("list item %d is a %s: a list default holds numbers or strings", i, v.RawGetInt(i).Type())
			}
			if kind != "" && k != kind {
				return "", fmt.Errorf("a list default holds only numbers or only strings")
			}
			kind = k
		}
		if kind == "" {
			kind = "list of strings"
		}
		return kind, nil
	}
	return "", fmt.Errorf("the default is a %s: want a number, boolean, string or list", def.Type())
}

// parseParam parses the override raw as the type of def.
func parseParam(L *lua.LState, name string, def lua.LValue, raw string) (lua.LValue, error) {
	kind, _ := paramKind(def)
	bad := &ParamError{Name: name, Value: raw, Want: kind, Default: luaLiteral(def)}
	switch kind {
	case "number":
		f, ok := parseLuaNumber(raw)
		if !ok {
			return nil, bad
		}
		return lua.LNumber(f), nil
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(raw)) {
		case "true", "1":
			return lua.LTrue, nil
		case "false", "0":
			return lua.LFalse, nil
		}
		bad.Want = "boolean (true, false, 1 or 0)"
		return nil, bad
	case "string":
		return lua.LString(raw), nil
	}
	out := L.NewTable()
	if strings.TrimSpace(raw) == "" {
		return out, nil
	}
	for _, item := range strings.Split(raw, ",") {
		if kind == "list of strings" {
			out.Append(lua.LString(strings.TrimSpace(item)))
			continue
		}
		f, ok := parseLuaNumber(item)
		if !ok {
			bad.Want = fmt.Sprintf("list of numbers (item %q is not a number)", strings.TrimSpace(item))
			return nil, bad
		}
		out.Append(lua.LNumber(f))
	}
	return out, nil
}

// parseLuaNumber parses s as Lua's tonumber does: decimal or 0x hex, with
// spaces around; inf and nan are not numbers.
func parseLuaNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "0x") || strings.HasPrefix(lower, "-0x") {
		n, err := strconv.ParseInt(lower, 0, 64)
		return float64(n), err == nil
	}
	if strings.Contains(lower, "inf") || strings.Contains(lower, "nan") || strings.Contains(lower, "_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

func copyList(L *lua.LState, t *lua.LTable) *lua.LTable {
	out := L.CreateTable(t.Len(), 0)
	for i := 1; i <= t.Len(); i++ {
		out.RawSetInt(i, t.RawGetInt(i))
	}
	return out
}

// luaLiteral writes a default as the playbook would.
func luaLiteral(v lua.LValue) string {
	switch x := v.(type) {
	case lua.LString:
		return strconv.Quote(string(x))
	case lua.LNumber:
		return formatNumber(float64(x))
	case *lua.LTable:
		var parts []string
		for i := 1; i <= x.Len(); i++ {
			parts = append(parts, luaLiteral(x.RawGetInt(i)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return v.String()
}
