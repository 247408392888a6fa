// Package luabind runs wtd's Lua playbooks: it owns the sandboxed Lua state
// and the global modules a playbook sees (params, mongod, host, step,
// report, log, sleep, sweep). Each binding checks its arguments, makes one engine
// or hostctl call with the run's context and converts the result; every
// capability lives in engine first.
package luabind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"wtd/engine"
	"wtd/hostctl"
)

// Env is what a playbook runs with.
type Env struct {
	Run *engine.Run
	// Overrides are the -p name=value of the command line, raw strings.
	Overrides map[string]string
	// Out receives report tables, print(), io.write() and log() lines; nil
	// discards them.
	Out io.Writer
	// Progress, if not nil, is called from load and workload progress
	// (from the engine's goroutines) with a label such as "load bench.c",
	// the operations done, the total (0 when only a duration bounds the
	// task) and the duration bound (0 when only the total does); once
	// more when the task is over, with its final count and a total of -1.
	Progress func(label string, done, total int64, duration time.Duration)
	// Host is what host.meminfo and host.facts read; it should be the
	// run's engine.Config.Host. Nil means hostctl.NewHost().
	Host *hostctl.Host
	// PatternBudget bounds one match of string.find, match, gmatch or
	// gsub (DefaultPatternBudget when 0): past it the run is stopped.
	PatternBudget time.Duration
	// MaxString caps the strings string.rep makes, in bytes (0: no cap).
	MaxString int64
}

// binding is the state a playbook's Lua functions share. It belongs to the
// goroutine that called RunPlaybook, like the LState.
type binding struct {
	ctx context.Context
	env Env
	// run is the engine side: the real run, or the check's stand-in
	// (nil only while Params reads the parameters).
	run  runAPI
	out  io.Writer
	host *hostctl.Host
	path string

	params    map[string]any
	declared  []Param // what params{} declared, sorted by name
	paramsSet bool
	// raised are the Go errors behind the Lua errors raised so far, so
	// that RunPlaybook's error wraps them (errors.As finds a ParamError).
	raised []raisedError

	// checking is true in Params and CheckPlaybook: nothing may act.
	// In Params (dry nil) params{} ends the run; in CheckPlaybook dry is
	// the stand-in engine the playbook runs against. checkDone is set
	// when a check stopped before the playbook's end, at stopped.
	checking  bool
	dry       *checkRun
	checkDone bool
	stopped   string
	// missed is the last global the playbook read that is not defined
	// (name and "path:line: "), for the error of calling it.
	missed struct{ name, where string }
	// ownErrors are the messages the playbook gave error and assert in a
	// check.
	ownErrors []string
	globals   *lua.LTable

	// partial is output written since the last newline (record).
	partial string
}

type raisedError struct {
	msg string
	err error
}

// RunPlaybook runs the playbook text src; path is its chunk name, so errors
// read "path:line: message". It returns the final parameters (also recorded
// with engine.Run.SetParams as soon as params{} is called; nil when the
// playbook declares none).
//
// A failed playbook returns a *ScriptError whose text starts with
// "path:line:" and which wraps the Go errors behind it: errors.As finds a
// *ParamError for a bad -p (the CLI exits 2; a -p given to a playbook that
// never calls params{} is reported when it ends), errors.Is finds
// engine.ErrAttached and the like. When ctx is cancelled the script stops
// at its next instruction (or its current sleep, load or workload) and the
// *ScriptError wraps both ctx.Err() and context.Cause(ctx), so
// errors.Is(err, context.Canceled) holds and the cause is reported in the
// text.
func RunPlaybook(ctx context.Context, path, src string, env Env) (map[string]any, error) {
	if env.Run == nil {
		return nil, errors.New("run playbook: no run")
	}
	b := &binding{ctx: ctx, env: env, run: liveRun{env.Run}, out: env.Out, host: env.Host, path: path}
	if b.out == nil {
		b.out = io.Discard
	}
	if b.host == nil {
		b.host = hostctl.NewHost()
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	defer b.flushOutput()
	b.openAll(L)

	fn, err := L.Load(strings.NewReader(src), path)
	if err != nil {
		return nil, syntaxError(path, src, err)
	}
	L.SetContext(ctx)
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		return b.params, b.scriptError(err)
	}
	if !b.paramsSet && len(env.Overrides) > 0 {
		err := b.unknownParam(nil)
		return nil, &ScriptError{Msg: path + ": " + err.Error(), errs: []error{err}}
	}
	return b.params, nil
}

// raisedBehind returns the Go error behind the Lua error message msg, nil
// when wtd raised none that msg ends with.
func (b *binding) raisedBehind(msg string) error {
	for i := len(b.raised) - 1; i >= 0; i-- {
		if strings.HasSuffix(msg, b.raised[i].msg) {
			return b.raised[i].err
		}
	}
	return nil
}

// ScriptError is a playbook that failed. Msg reads "path:line: message";
// the errors it wraps are the Go errors behind the message, if any.
type ScriptError struct {
	Msg       string
	Traceback string
	errs      []error
}

func (e *ScriptError) Error() string { return e.Msg }

// Unwrap returns the Go errors behind the failure.
func (e *ScriptError) Unwrap() []error { return e.errs }

// scriptError turns a failed PCall into a *ScriptError.
func (b *binding) scriptError(err error) error {
	se := &ScriptError{Msg: err.Error()}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		se.Msg, se.Traceback = ae.Object.String(), ae.StackTrace
	}
	se.Msg = b.unknownGlobal(se.Msg)
	if behind := b.raisedBehind(se.Msg); behind != nil {
		se.errs = append(se.errs, behind)
	}
	if b.ctx.Err() != nil {
		cause := context.Cause(b.ctx)
		se.errs = append(se.errs, b.ctx.Err())
		if cause != b.ctx.Err() {
			se.errs = append(se.errs, cause)
		}
		if !strings.Contains(se.Msg, cause.Error()) {
			se.Msg += " (" + cause.Error() + ")"
		}
	}
	return se
}

// syntaxError words a parse or compile error as "path:line: message".
func syntaxError(path, src string, err error) error {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Cause != nil {
		err = ae.Cause
	}
	var pe *parse.Error
	var ce *lua.CompileError
	msg := err.Error()
	switch {
	case errors.As(err, &pe):
		detail := ""
		if pe.Message != "syntax error" {
			detail = ": " + pe.Message
		}
		if pe.Pos.Line == parse.EOF {
			msg = fmt.Sprintf("%s:%d: syntax error at the end of the file%s", path, strings.Count(src, "\n")+1, detail)
		} else {
			msg = fmt.Sprintf("%s:%d: syntax error near '%s'%s", path, pe.Pos.Line, pe.Token, detail)
		}
	case errors.As(err, &ce):
		msg = fmt.Sprintf("%s:%d: %s", path, ce.Line, ce.Message)
	}
	return &ScriptError{Msg: strings.TrimSpace(msg), errs: []error{err}}
}

// raise raises the Lua error "path:line: what: err" at the calling playbook
// line ("path:line: err" when err already starts with what), remembering
// err for RunPlaybook's error. It does not return.
func (b *binding) raise(L *lua.LState, what string, err error) {
	msg := err.Error()
	if !strings.HasPrefix(msg, what+" ") && !strings.HasPrefix(msg, what+":") {
		msg = what + ": " + msg
	}
	b.raised = append(b.raised, raisedError{msg: msg, err: err})
	L.RaiseError("%s", msg)
}

// raisef raises a Lua error "path:line: message" for a problem found in
// the arguments. It does not return.
func raisef(L *lua.LState, format string, args ...any) {
	L.RaiseError("%s", fmt.Sprintf(format, args...))
}

// setFuncs returns a new table of fns.
func setFuncs(L *lua.LState, fns map[string]lua.LGFunction) *lua.LTable {
	return L.SetFuncs(L.NewTable(), fns)
}

// moduleTable returns the table of a wtd module (mongod, host, report,
// sweep): reading a name it does not have is an error naming the
// module's functions ("mongod has no function "strat"; did you mean
// start? (functions: connect, service, start)").
func moduleTable(L *lua.LState, module string, fns map[string]lua.LGFunction) *lua.LTable {
	t := setFuncs(L, fns)
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	sort.Strings(names)
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		key := L.Get(2)
		hint := ""
		if s, ok := key.(lua.LString); ok {
			hint = didYouMean(string(s), names)
		}
		raisef(L, "%s has no function %s%s (functions: %s)", module, quoteKey(key), hint, strings.Join(names, ", "))
		return 0
	}))
	L.SetMetatable(t, mt)
	return t
}

// openAll opens the sandbox and every module of wtd's Lua API in L: a run
// and a check (wtd check) see the same globals.
func (b *binding) openAll(L *lua.LState) {
	b.openSandbox(L)
	b.openPatterns(L)
	b.openParams(L)
	b.openMongod(L)
	b.openHost(L)
	b.openStep(L)
	b.openReport(L)
	b.openThreshold(L)
	b.openLog(L)
	b.openSweep(L)
	b.openTune(L)
}
