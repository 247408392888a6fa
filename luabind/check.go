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

// checkTimeout bounds how long Check lets a playbook run before its
// params{} call.
const checkTimeout = 5 * time.Second

// checkMemory bounds how much memory a check may take: it runs in the
// daemon's process, and a playbook may build big strings before params{}.
const checkMemory = 256 << 20

// errCheckDone stops a checking run at its first call that would act.
var errCheckDone = errors.New("check done")

// Check finds a playbook's usage errors before anything is recorded: it
// compiles src and runs it up to its params{} call, which it checks against
// overrides, or up to the first call that would act (mongod, host, step,
// report, log, sleep, sweep, files), which never happens in a check. Errors are
// *ScriptError values as RunPlaybook returns them (errors.As finds a
// *ParamError for a bad -p).
//
// A playbook that acts before params{}, never calls it, does not reach it
// in checkTimeout, takes more than checkMemory or calls string.rep or a
// pattern function first has its overrides checked against its text: a -p
// that no params{...} in it names is refused (any -p when it has no params
// call), and so is a value that does not parse as a default written as a
// constant. When the text calls params other than with a literal table (or
// could reach it through _G, getfenv, load ...), the run itself checks the
// overrides.
func Check(ctx context.Context, path, src string, overrides map[string]string) error {
	_, err := check(ctx, path, src, overrides)
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
	b, err := check(ctx, path, src, nil)
	if err != nil {
		return nil, false, err
	}
	return b.declared, b.paramsSet, nil
}

// check runs the playbook as Check describes and returns its binding.
func check(ctx context.Context, path, src string, overrides map[string]string) (*binding, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	defer watchCheckMemory(cancel)()
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
	b.checkDone = true
	b.raise(L, "check", errCheckDone)
}

// watchCheckMemory calls cancel once the process holds checkMemory more
// than when it started; the returned func ends the watch.
func watchCheckMemory(cancel func()) (stop func()) {
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
				if engine.MemoryInUse()-base > checkMemory {
					cancel()
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
