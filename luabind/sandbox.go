package luabind

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"wtd/hostctl"
)

// The sandbox: base (without file loading), table, string, math, and
// restricted os and io. A playbook runs no commands, touches no files
// outside the run's directory and loads no other code.

// allowedOS are the os functions a playbook keeps.
var allowedOS = []string{"time", "clock", "date", "getenv"}

// refused are the functions replaced by an error, with the reason.
var refused = map[string]string{
	"dofile":     "a playbook is one file: put the code in it",
	"loadfile":   "a playbook is one file: put the code in it",
	"require":    "wtd's modules (params, mongod, host, step, report, log, sleep, sweep) are globals already",
	"module":     "a playbook is one file: put the code in it",
	"os.execute": "a playbook runs no commands: use the mongod and host modules",
	"os.exit":    "a playbook ends by returning from the file or with error(...)",
	"os.remove":  "a playbook removes no files",
	"os.rename":  "a playbook renames no files",
	"os.setenv":  "a playbook does not change the environment",
	"os.tmpname": "a playbook creates no files outside the run's directory: use io.open with a relative path",
	"io.popen":   "a playbook runs no commands: use the mongod and host modules",
	"io.read":    "a playbook reads no standard input: use params{} and -p name=value",
	"io.input":   "a playbook reads no standard input: use io.open with a path in the run's directory",
	"io.output":  "io.write writes to the run's output; use io.open for files in the run's directory",
	"io.tmpfile": "a playbook creates no files outside the run's directory: use io.open with a relative path",
	"io.close":   "close a file with f:close()",
}

func (b *binding) openSandbox(L *lua.LState) {
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.OsLibName, lua.OpenOs}, {lua.IoLibName, lua.OpenIo}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	g.RawSetString("_printregs", lua.LNil)
	g.RawSetString("print", L.NewFunction(b.print))

	osLib := L.GetGlobal("os").(*lua.LTable)
	safeOS := L.NewTable()
	for _, name := range allowedOS {
		safeOS.RawSetString(name, osLib.RawGetString(name))
	}
	L.SetGlobal("os", safeOS)
	if b.dry != nil {
		b.checkTime(L, safeOS)
		b.checkOwnErrors(L)
	}

	ioLib := L.GetGlobal("io").(*lua.LTable)
	safeIO := setFuncs(L, map[string]lua.LGFunction{"write": b.ioWrite})
	safeIO.RawSetString("type", ioLib.RawGetString("type"))
	safeIO.RawSetString("open", L.NewFunction(b.ioOpen(ioLib.RawGetString("open"))))
	safeIO.RawSetString("lines", L.NewFunction(b.ioLines(ioLib.RawGetString("lines"))))
	L.SetGlobal("io", safeIO)

	b.watchGlobals(L)
	for name, why := range refused {
		table, fn := g, name
		if lib, f, ok := strings.Cut(name, "."); ok {
			table, fn = L.GetGlobal(lib).(*lua.LTable), f
		}
		table.RawSetString(fn, L.NewFunction(refuse(name, why)))
	}
}

func refuse(name, why string) lua.LGFunction {
	return func(L *lua.LState) int {
		raisef(L, "%s is not available in a playbook: %s", name, why)
		return 0
	}
}

// print(...)
//
// Writes its arguments (tostring, tab-separated) and a newline to the
// run's output.
func (b *binding) print(L *lua.LState) int {
	parts := make([]string, L.GetTop())
	for i := range parts {
		parts[i] = L.ToStringMeta(L.Get(i + 1)).String()
	}
	line := strings.Join(parts, "\t")
	fmt.Fprintln(b.out, line)
	b.record(line + "\n")
	return 0
}

// io.write(...)
//
// Writes its string and number arguments to the run's output, in one
// write (so that the output's masking of URI passwords sees a URI the
// arguments spell out together).
func (b *binding) ioWrite(L *lua.LState) int {
	var text strings.Builder
	for i := 1; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			text.WriteString(string(v))
		case lua.LNumber:
			text.WriteString(v.String())
		default:
			L.ArgError(i, "string expected, got "+v.Type().String())
		}
	}
	io.WriteString(b.out, text.String())
	b.record(text.String())
	return 0
}

// record keeps what the playbook wrote with the run, one event per
// complete line; flushOutput records an unfinished last line.
func (b *binding) record(text string) {
	if b.run == nil {
		return // reading the parameters
	}
	b.partial += text
	for {
		line, rest, ok := strings.Cut(b.partial, "\n")
		if !ok {
			return
		}
		b.run.Output(line)
		b.partial = rest
	}
}

func (b *binding) flushOutput() {
	if b.partial != "" && b.run != nil {
		b.run.Output(b.partial)
		b.partial = ""
	}
}

// io.open(path [, mode]) -> file | nil, message
//
// Opens a file inside the run's directory (a relative path is relative to
// it); any other path is an error.
func (b *binding) ioOpen(open lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		path := L.CheckString(1)
		mode := L.OptString(2, "r")
		abs, err := b.inRunDir(path)
		if err != nil {
			b.raise(L, "io.open", err)
		}
		top := L.GetTop()
		L.Push(open)
		L.Push(lua.LString(abs))
		L.Push(lua.LString(mode))
		L.Call(2, lua.MultRet)
		return L.GetTop() - top
	}
}

// io.lines(path) -> iterator over the lines of a file in the run's
// directory
func (b *binding) ioLines(lines lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if L.GetTop() == 0 {
			raisef(L, "io.lines without a file is not available in a playbook: it reads no standard input")
		}
		abs, err := b.inRunDir(L.CheckString(1))
		if err != nil {
			b.raise(L, "io.lines", err)
		}
		top := L.GetTop()
		L.Push(lines)
		L.Push(lua.LString(abs))
		L.Call(1, lua.MultRet)
		return L.GetTop() - top
	}
}

// inRunDir resolves path (relative: to the run's directory) as the kernel
// would, symbolic links and ".." included, and checks that it lies inside
// the run's directory. It returns the resolved path.
func (b *binding) inRunDir(path string) (string, error) {
	if b.dry != nil {
		return checkRunDir(path)
	}
	if b.checking {
		b.checkDone = true // reading the parameters opens no files
		return "", errCheckDone
	}
	dir, err := hostctl.ResolvePath(".", b.run.Dir())
	if err != nil {
		return "", err
	}
	abs, err := hostctl.ResolvePath(dir, path)
	if err != nil {
		return "", err
	}
	if !hostctl.Within(abs, dir) {
		return "", fmt.Errorf("%s is outside the run's directory %s: a playbook opens files only there", path, dir)
	}
	return abs, nil
}

// checkRunDir is inRunDir for a check, which has no run directory: a path
// that stays inside one (relative, without leading "..") opens the null
// device instead, so writes go nowhere and reads find nothing.
func checkRunDir(path string) (string, error) {
	clean := filepath.Clean(path)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("%s is outside the run's directory: a playbook opens files only there", path)
	}
	return os.DevNull, nil
}

// checkTime gives a check's playbook the check's clock: os.time() and
// os.date without a time read it (see checkClock).
func (b *binding) checkTime(L *lua.LState, osLib *lua.LTable) {
	clock := b.dry.clock
	origTime, origDate := osLib.RawGetString("time"), osLib.RawGetString("date")
	osLib.RawSetString("time", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.Push(lua.LNumber(clock.now().Unix()))
			return 1
		}
		return callWith(L, origTime, L.Get(1))
	}))
	osLib.RawSetString("date", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() >= 2 {
			return callWith(L, origDate, L.Get(1), L.Get(2))
		}
		return callWith(L, origDate, lua.LString(L.OptString(1, "%c")), lua.LNumber(clock.now().Unix()))
	}))
}

// callWith calls fn with args and returns its results.
func callWith(L *lua.LState, fn lua.LValue, args ...lua.LValue) int {
	top := L.GetTop()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	L.Call(len(args), lua.MultRet)
	return L.GetTop() - top
}

// watchGlobals remembers the last undefined global the playbook reads, so
// that calling it says its name (gopher-lua says only "attempt to call a
// non-function object"); a read gives nil as before.
func (b *binding) watchGlobals(L *lua.LState) {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		if name, ok := L.Get(2).(lua.LString); ok {
			b.missed.name, b.missed.where = string(name), playbookLine(L)
		}
		L.Push(lua.LNil)
		return 1
	}))
	L.SetMetatable(L.G.Global, mt)
	b.globals = L.G.Global
}

// unknownGlobal rewrites the error of a call of an undefined global read
// on the same line: "pb.lua:3: stepp is not defined (a call of an unknown
// global); did you mean step?".
func (b *binding) unknownGlobal(msg string) string {
	const callNil = "attempt to call a non-function object"
	where := b.missed.where
	if where == "" || b.globals == nil || !strings.HasPrefix(msg, where) || !strings.HasSuffix(msg, callNil) {
		return msg
	}
	var names []string
	b.globals.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); ok {
			names = append(names, string(s))
		}
	})
	return fmt.Sprintf("%s%s is not defined (a call of an unknown global)%s", where, b.missed.name, didYouMean(b.missed.name, names))
}

// checkOwnErrors wraps error and assert for a check: an error the
// playbook raises itself may depend on what a run measures (an assert on
// a workload's count), which a check does not, so it ends the check
// without failing it (see ownError).
func (b *binding) checkOwnErrors(L *lua.LState) {
	g := L.G.Global
	origError, origAssert := g.RawGetString("error"), g.RawGetString("assert")
	g.RawSetString("error", L.NewFunction(func(L *lua.LState) int {
		b.ownErrors = append(b.ownErrors, L.ToStringMeta(L.Get(1)).String())
		return callWith(L, origError, argsOf(L)...)
	}))
	g.RawSetString("assert", L.NewFunction(func(L *lua.LState) int {
		if !lua.LVAsBool(L.Get(1)) {
			msg := "assertion failed!"
			if L.GetTop() >= 2 {
				msg = L.ToStringMeta(L.Get(2)).String()
			}
			b.ownErrors = append(b.ownErrors, msg)
		}
		return callWith(L, origAssert, argsOf(L)...)
	}))
}

func argsOf(L *lua.LState) []lua.LValue {
	args := make([]lua.LValue, L.GetTop())
	for i := range args {
		args[i] = L.Get(i + 1)
	}
	return args
}

// ownError reports whether msg, a check's final error, is one the
// playbook raised itself with error or assert.
func (b *binding) ownError(msg string) bool {
	for i := len(b.ownErrors) - 1; i >= 0; i-- {
		if strings.HasSuffix(msg, b.ownErrors[i]) {
			return b.raisedBehind(msg) == nil
		}
	}
	return false
}
