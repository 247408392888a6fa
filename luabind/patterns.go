package luabind

import (
	"fmt"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"

	"wtd/engine"
)

// DefaultPatternBudget is how long one string.find, match, gmatch or gsub
// may spend matching before the run is stopped.
const DefaultPatternBudget = 5 * time.Second

// gopher-lua's pattern matcher (pm) backtracks without bound and cannot be
// interrupted: string.find(string.rep("a", 2000), ".-.-.-.-.-.-.-b") keeps
// a goroutine busy for longer than the universe is old. So each pattern
// function first runs the same match (pm.Find with the same start and
// limit) on a goroutine of its own and waits for it at most the pattern
// budget, or until the run is stopped. A match that ends in time is then
// done again by gopher-lua's own function, which makes the same steps and
// so ends in about the same time, with its results, captures and errors
// exactly as before. One that does not is a *engine.LimitError naming the
// playbook line: the run is stopped (a pcall cannot catch it and go on),
// and the abandoned matcher keeps a core busy until the process exits,
// which wtd run does once the run is recorded.

// openPatterns replaces string.find, match, gmatch and gsub (the string
// table is also strings' metatable, so s:find is covered) with guarded
// ones, and caps string.rep's result at Env.MaxString bytes.
func (b *binding) openPatterns(L *lua.LState) {
	str := L.GetGlobal("string").(*lua.LTable)
	for name, bounds := range map[string]patternBounds{
		"find":   findBounds,
		"match":  matchBounds,
		"gmatch": func(L *lua.LState) (int, int, bool) { return 0, -1, true },
		"gsub":   func(L *lua.LState) (int, int, bool) { return 0, L.OptInt(4, -1), true },
	} {
		orig := str.RawGetString(name)
		guarded := L.NewFunction(b.guardPattern("string."+name, orig, bounds))
		str.RawSetString(name, guarded)
		if name == "gmatch" {
			str.RawSetString("gfind", guarded)
		}
	}
	str.RawSetString("rep", L.NewFunction(b.strRep(str.RawGetString("rep"))))
}

// patternBounds returns where a pattern function starts matching and how
// many matches it looks for (-1: all), as gopher-lua's function computes
// them from its arguments; ok is false when it does not match a pattern
// (a plain find, an empty pattern).
type patternBounds func(L *lua.LState) (init, limit int, ok bool)

func findBounds(L *lua.LState) (int, int, bool) {
	s, pat := L.CheckString(1), L.CheckString(2)
	if pat == "" || (L.GetTop() == 4 && lua.LVAsBool(L.Get(4))) {
		return 0, 0, false
	}
	init := L.OptInt(3, 1)
	if init != 0 {
		init--
	}
	if init < 0 {
		init += len(s) + 1
	}
	return max(init, 0), 1, true
}

func matchBounds(L *lua.LState) (int, int, bool) {
	s := L.CheckString(1)
	L.CheckString(2)
	init := L.OptInt(3, 1)
	if init < 0 {
		init += len(s) + 1
	}
	return max(init-1, 0), 1, true
}

// guardPattern wraps gopher-lua's pattern function orig (see above).
func (b *binding) guardPattern(name string, orig lua.LValue, bounds patternBounds) lua.LGFunction {
	return func(L *lua.LState) int {
		s, pat := L.CheckString(1), L.CheckString(2)
		if init, limit, ok := bounds(L); ok {
			b.tryPattern(L, name, s, pat, init, limit)
		}
		top := L.GetTop()
		L.Push(orig)
		for i := 1; i <= top; i++ {
			L.Push(L.Get(i))
		}
		L.Call(top, lua.MultRet)
		return L.GetTop() - top
	}
}

// tryPattern runs the match on its own goroutine, within the budget.
func (b *binding) tryPattern(L *lua.LState, name, s, pat string, init, limit int) {
	if b.checking {
		// A check runs in the daemon's process, where an abandoned matcher
		// would spin for the daemon's life: it ends here (the run checks
		// what follows itself).
		b.stopAt(L, name+" matches a pattern, which a check does not run: the rest is checked by the run")
	}
	done := make(chan error, 1)
	go func() {
		_, err := pm.Find(pat, unsafe.Slice(unsafe.StringData(s), len(s)), init, limit)
		done <- err
	}()
	budget := b.env.PatternBudget
	if budget <= 0 {
		budget = DefaultPatternBudget
	}
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			raisef(L, "%s: pattern %q: %v", name, pat, err)
		}
	case <-b.ctx.Done():
		b.raise(L, name, fmt.Errorf("pattern %q stopped: %w", pat, b.ctx.Err()))
	case <-timer.C:
		err := &engine.LimitError{Msg: fmt.Sprintf("%s%s: pattern %q on a %d-byte string matched for more than %s "+
			"(it backtracks too much: anchor it, or use fewer .- and .*); the run is stopped", playbookLine(L), name, pat, len(s), budget)}
		if b.run != nil {
			b.run.Abort(err)
		}
		// The message names the line already: raised as it is.
		b.raised = append(b.raised, raisedError{msg: err.Msg, err: err})
		L.Error(lua.LString(err.Msg), 0)
	}
}

// strRep is string.rep with its result capped at Env.MaxString bytes.
func (b *binding) strRep(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if b.checking && b.dry == nil {
			b.stopCheck(L) // reading the parameters builds no big strings
		}
		s, n := L.CheckString(1), L.CheckInt(2)
		if limit := b.env.MaxString; b.dry != nil && n > 0 && int64(len(s))*int64(n) > limit {
			// The run's own cap (--max-memory) decides: the check stops.
			b.stopAt(L, fmt.Sprintf("string.rep would build %s, more than a check does (%s)",
				engine.FormatBytes(int64(len(s))*int64(n)), engine.FormatBytes(limit)))
		}
		if limit := b.env.MaxString; limit > 0 && n > 0 && int64(len(s))*int64(n) > limit {
			raisef(L, "string.rep: the result would be %s, more than %s, the most one string may take "+
				"(a quarter of the run's memory limit, --max-memory)", engine.FormatBytes(int64(len(s))*int64(n)), engine.FormatBytes(limit))
		}
		L.Push(orig)
		L.Push(L.Get(1))
		L.Push(L.Get(2))
		L.Call(2, 1)
		return 1
	}
}

// playbookLine is "path:line: " of the innermost playbook line running
// (a Go function such as pcall may stand between it and the caller).
func playbookLine(L *lua.LState) string {
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return ""
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			return fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
		}
	}
}
