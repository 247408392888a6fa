package luabind

import (
	"fmt"
	"math"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// options is an options table of a Lua call (mongod.start{...}), checked
// against the keys the call allows. Its getters raise an error naming the
// call, the key and the type wanted.
type options struct {
	L     *lua.LState
	fname string
	t     *lua.LTable
}

// checkOptions checks that argument n is a table (or nil: no options)
// whose keys are all among allowed.
func checkOptions(L *lua.LState, n int, fname string, allowed ...string) options {
	var t *lua.LTable
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		t = L.NewTable()
	case *lua.LTable:
		t = v
	default:
		raisef(L, "%s: want an options table {...}, got %s", fname, v.Type())
	}
	return tableOptions(L, t, fname, allowed...)
}

// tableOptions checks a nested options table (mix = {...}).
func tableOptions(L *lua.LState, t *lua.LTable, fname string, allowed ...string) options {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	t.ForEach(func(k, _ lua.LValue) {
		ks, isString := k.(lua.LString)
		if !isString || !ok[string(ks)] {
			sorted := append([]string(nil), allowed...)
			sort.Strings(sorted)
			hint := ""
			if isString {
				hint = didYouMean(string(ks), allowed)
			}
			raisef(L, "%s: unknown option %s%s (allowed: %s)", fname, quoteKey(k), hint, strings.Join(sorted, ", "))
		}
	})
	return options{L: L, fname: fname, t: t}
}

// didYouMean is "; did you mean NAME?" for the candidate word most
// likely meant (see nearest), "" when there is none.
func didYouMean(word string, candidates []string) string {
	if near := nearest(word, candidates); near != "" {
		return fmt.Sprintf("; did you mean %s?", near)
	}
	return ""
}

// nearest returns the one candidate a mistyped word most likely meant:
// within two edits (one for words of up to four letters; a swap of two
// neighbours is one edit), case aside, and closer than any other; "" when
// there is none.
func nearest(word string, candidates []string) string {
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	best, bestD, ties := "", limit+1, 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d >= len(word) || d >= len(c) {
			continue // nothing of the word is left in c
		}
		switch {
		case d < bestD:
			best, bestD, ties = c, d, 0
		case d == bestD:
			ties++
		}
	}
	if bestD > limit || ties > 0 {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions and swaps of neighbours).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func quoteKey(k lua.LValue) string {
	if s, ok := k.(lua.LString); ok {
		return `"` + string(s) + `"`
	}
	return "[" + k.String() + "]"
}

func (o options) get(key string) lua.LValue { return o.t.RawGetString(key) }

func (o options) wrongType(key, want string, v lua.LValue) {
	raisef(o.L, "%s: %s must be %s, got %s", o.fname, key, want, describe(v))
}

// describe names a Lua value for an error: its type, and its text when
// short.
func describe(v lua.LValue) string {
	switch v.(type) {
	case lua.LString, lua.LNumber, lua.LBool:
		s := v.String()
		if _, isString := v.(lua.LString); isString {
			s = `"` + s + `"`
		}
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return v.Type().String() + " " + s
	}
	return v.Type().String()
}

// number returns the number at key; ok is false when the key is absent.
func (o options) number(key string) (float64, bool) {
	switch v := o.get(key).(type) {
	case *lua.LNilType:
		return 0, false
	case lua.LNumber:
		return float64(v), true
	default:
		o.wrongType(key, "a number", v)
	}
	return 0, false
}

// integer returns the whole number at key.
func (o options) integer(key string) (int64, bool) {
	f, ok := o.number(key)
	if !ok {
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		o.wrongType(key, "a whole number", lua.LNumber(f))
	}
	return int64(f), true
}

// str returns the string at key.
func (o options) str(key string) (string, bool) {
	switch v := o.get(key).(type) {
	case *lua.LNilType:
		return "", false
	case lua.LString:
		return string(v), true
	default:
		o.wrongType(key, "a string", v)
	}
	return "", false
}

// strings returns the list of strings at key.
func (o options) strings(key string) ([]string, bool) {
	v := o.get(key)
	if v == lua.LNil {
		return nil, false
	}
	t, isTable := v.(*lua.LTable)
	if !isTable || !isList(t) {
		o.wrongType(key, "a list of strings", v)
	}
	out := []string{}
	for i := 1; i <= t.Len(); i++ {
		s, isString := t.RawGetInt(i).(lua.LString)
		if !isString {
			raisef(o.L, "%s: %s[%d] must be a string, got %s", o.fname, key, i, describe(t.RawGetInt(i)))
		}
		out = append(out, string(s))
	}
	return out, true
}

// table returns the table at key.
func (o options) table(key string) (*lua.LTable, bool) {
	switch v := o.get(key).(type) {
	case *lua.LNilType:
		return nil, false
	case *lua.LTable:
		return v, true
	default:
		o.wrongType(key, "a table", v)
	}
	return nil, false
}

// isList reports whether t's keys are exactly 1..n (an empty table is a
// list).
func isList(t *lua.LTable) bool {
	n, count := t.Len(), 0
	t.ForEach(func(lua.LValue, lua.LValue) { count++ })
	return count == n
}

func (o options) boolean(key string) (bool, bool) {
	v := o.get(key)
	switch x := v.(type) {
	case *lua.LNilType:
		return false, false
	case lua.LBool:
		return bool(x), true
	}
	o.wrongType(key, "a boolean", v)
	return false, false
}
