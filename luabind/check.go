package luabind

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"wtd/engine"
)

// checkTimeout bounds how long a check runs a playbook; checkMemory how
// much memory it may take (it runs in the daemon's process too).
const (
	checkTimeout = 5 * time.Second
	checkMemory  = 256 << 20
)

// errCheckDone stops Params at its first call that would act.
var errCheckDone = errors.New("check done")

// Check checks a playbook and its -p overrides before anything is
// recorded (CheckPlaybook); it returns CheckPlaybook's error.
func Check(ctx context.Context, path, src string, overrides map[string]string) error {
	_, err := CheckPlaybook(ctx, path, src, overrides, CheckOptions{})
	return err
}

// Param is a parameter a playbook declares with params{}: its name, its
// type as its default gives it, and the default.
type Param struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default any    `json:"default"`
}

// Params returns the parameters the playbook declares, sorted by name, as
// wtd params lists them: it runs the playbook as Check does, up to its
// params{} call, without starting or contacting anything. declared is
// false when the playbook does not reach params{} before it touches
// anything else (or never calls it).
func Params(ctx context.Context, path, src string) (params []Param, declared bool, err error) {
	b, err := readParams(ctx, path, src, nil)
	if err != nil {
		return nil, false, err
	}
	return b.declared, b.paramsSet, nil
}

// readParams runs the playbook up to its params{} call, or up to the
// first call that would act (mongod, host, step, report, log, sleep,
// sweep, files), which ends it, and returns its binding. Stopped before
// params{}, what the text declares decides whether overrides fit.
func readParams(ctx context.Context, path, src string, overrides map[string]string) (*binding, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	defer watchCheckMemory(checkMemory, func() { cancel() })()
	b := &binding{ctx: ctx, env: Env{Overrides: overrides}, out: io.Discard, path: path, checking: true}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	b.openSandbox(L)
	b.openPatterns(L)
	b.openParams(L)
	for _, name := range []string{"mongod", "host", "step", "report", "threshold", "log", "sleep", "sweep", "tune"} {
		L.SetGlobal(name, b.stopper(L))
	}
	fn, err := L.Load(strings.NewReader(src), path)
	if err != nil {
		return b, syntaxError(path, src, err)
	}
	L.SetContext(ctx)
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	switch {
	case b.paramsSet:
		return b, nil // params{} took the overrides
	case b.checkDone || ctx.Err() != nil:
		// Stopped before params{}: what the text declares decides.
		return b, readDeclaredParams(path, src).check(L, path, overrides)
	case err != nil:
		return b, b.scriptError(err)
	case len(overrides) > 0:
		// Ran to its end without calling params{}.
		if err := readDeclaredParams(path, src).check(L, path, overrides); err != nil {
			return b, err
		}
		perr := b.unknownParam(nil)
		return b, &ScriptError{Msg: path + ": " + perr.Error(), errs: []error{perr}}
	}
	return b, nil
}

// stopper is a value that ends a check wherever the playbook touches it:
// called, indexed or called as a method.
func (b *binding) stopper(L *lua.LState) lua.LValue {
	stop := L.NewFunction(func(L *lua.LState) int {
		b.stopCheck(L)
		return 0
	})
	t := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", stop)
	mt.RawSetString("__call", stop)
	L.SetMetatable(t, mt)
	return t
}

// stopCheck ends a checking run. It does not return.
func (b *binding) stopCheck(L *lua.LState) {
	b.stopAt(L, "")
}

// stopAt ends a checking run at the calling line, saying why (for the
// check's report). It does not return.
func (b *binding) stopAt(L *lua.LState, why string) {
	b.checkDone = true
	if b.stopped == "" {
		b.stopped = strings.TrimSuffix(playbookLine(L), " ") + " " + why
	}
	b.raise(L, "check", errCheckDone)
}

// watchCheckMemory calls cancel once the process holds limit more than
// when it started; the returned func ends the watch.
func watchCheckMemory(limit int64, cancel func()) (stop func()) {
	base := engine.MemoryInUse()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if engine.MemoryInUse()-base > limit {
					cancel()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
