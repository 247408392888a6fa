package luabind

import (
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// maxSleepSeconds bounds sleep (and a workload's duration): 24 h.
const maxSleepSeconds = 24 * 60 * 60

func (b *binding) openLog(L *lua.LState) {
	L.SetGlobal("log", L.NewFunction(b.log))
	L.SetGlobal("sleep", L.NewFunction(b.sleep))
}

// log(...)
//
// Records its arguments (tostring, space-separated) as an info event of
// the run (source "playbook"); the run prints its events to its log.
func (b *binding) log(L *lua.LState) int {
	b.run.Eventf("info", "playbook", "%s", joinArgs(L))
	return 0
}

// joinArgs returns the call's arguments as tostring writes them, separated
// by spaces.
func joinArgs(L *lua.LState) string {
	parts := make([]string, L.GetTop())
	for i := range parts {
		parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
	}
	return strings.Join(parts, " ")
}

// sleep(seconds)
//
// Pauses the playbook for seconds, [0, 86400]; a cancelled run ends the
// pause at once with the error "sleep: interrupted".
func (b *binding) sleep(L *lua.LState) int {
	sec := float64(L.CheckNumber(1))
	if !(sec >= 0 && sec <= maxSleepSeconds) {
		L.ArgError(1, fmt.Sprintf("seconds %v out of range [0, %d]", sec, maxSleepSeconds))
	}
	if b.dry != nil {
		// A check sleeps in its own time: at once.
		if err := b.ctx.Err(); err != nil {
			b.raise(L, "sleep", errInterrupted{cause: err})
		}
		b.dry.clock.advance(time.Duration(sec * float64(time.Second)))
		return 0
	}
	timer := time.NewTimer(time.Duration(sec * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return 0
	case <-b.ctx.Done():
		b.raise(L, "sleep", errInterrupted{cause: b.ctx.Err()})
	}
	return 0
}

// errInterrupted is a pause cut short by the run's cancellation.
type errInterrupted struct{ cause error }

func (e errInterrupted) Error() string { return "interrupted" }
func (e errInterrupted) Unwrap() error { return e.cause }
