package luabind

import (
	"fmt"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// declaredParams is what a playbook's text says about its parameters, read
// from its syntax tree without running it: the names of its params{...}
// calls, so that Check can refuse a -p no params{} declares even when the
// playbook acts before it calls params{} or never calls it.
type declaredParams struct {
	// unreadable is true when the text may call params in a way the tree
	// does not show: a table that is not a literal, params used as a value
	// or redefined, the globals reached by name (_G, getfenv, setfenv,
	// load, loadstring). Then nothing is concluded from the text.
	unreadable bool
	// calls counts the params{...} calls; line is the first one's.
	calls, line int
	// defaults are the declared names, each with its default's expression
	// (nil when two calls declare the name).
	defaults map[string]ast.Expr
}

// dynamicGlobals are the globals through which a playbook can reach
// params (or replace the globals) without naming it.
var dynamicGlobals = map[string]bool{"_G": true, "getfenv": true, "setfenv": true, "load": true, "loadstring": true}

// readDeclaredParams parses src and collects its params{...} calls.
func readDeclaredParams(path, src string) declaredParams {
	d := declaredParams{defaults: map[string]ast.Expr{}}
	chunk, err := parse.Parse(strings.NewReader(src), path)
	if err != nil {
		d.unreadable = true
		return d
	}
	d.stmts(chunk)
	return d
}

// check returns the error of the first override (sorted by name) the text
// does not declare or whose value does not parse as its constant default;
// nil when every override fits or the text is unreadable.
func (d declaredParams) check(L *lua.LState, path string, overrides map[string]string) error {
	if d.unreadable || len(overrides) == 0 {
		return nil
	}
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	if d.calls == 0 {
		perr := &ParamError{Name: names[0], Value: overrides[names[0]], Never: true}
		return &ScriptError{Msg: fmt.Sprintf("playbook %s declares no parameters (it never calls params{}): -p %s=%s is not one",
			path, perr.Name, perr.Value), errs: []error{perr}}
	}
	known := make([]string, 0, len(d.defaults))
	for n := range d.defaults {
		known = append(known, n)
	}
	sort.Strings(known)
	var unknown []string
	for _, n := range names {
		if _, ok := d.defaults[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		perr := &ParamError{Name: unknown[0], Known: known, Unknown: unknown}
		return &ScriptError{Msg: fmt.Sprintf("%s:%d: params: %v", path, d.line, perr), errs: []error{perr}}
	}
	for _, n := range names {
		expr := d.defaults[n]
		var perr error
		if def := constant(L, expr); def != nil {
			_, perr = parseParam(L, n, def, overrides[n])
		}
		if perr != nil {
			return &ScriptError{Msg: fmt.Sprintf("%s:%d: params: %v", path, d.line, perr), errs: []error{perr}}
		}
	}
	return nil
}

func (d *declaredParams) stmts(list []ast.Stmt) {
	for _, s := range list {
		d.stmt(s)
	}
}

func (d *declaredParams) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		d.exprs(s.Lhs)
		d.exprs(s.Rhs)
	case *ast.LocalAssignStmt:
		d.exprs(s.Exprs)
	case *ast.FuncCallStmt:
		d.expr(s.Expr)
	case *ast.DoBlockStmt:
		d.stmts(s.Stmts)
	case *ast.WhileStmt:
		d.expr(s.Condition)
		d.stmts(s.Stmts)
	case *ast.RepeatStmt:
		d.stmts(s.Stmts)
		d.expr(s.Condition)
	case *ast.IfStmt:
		d.expr(s.Condition)
		d.stmts(s.Then)
		d.stmts(s.Else)
	case *ast.NumberForStmt:
		d.exprs([]ast.Expr{s.Init, s.Limit, s.Step})
		d.stmts(s.Stmts)
	case *ast.GenericForStmt:
		d.exprs(s.Exprs)
		d.stmts(s.Stmts)
	case *ast.FuncDefStmt:
		d.exprs([]ast.Expr{s.Name.Func, s.Name.Receiver})
		d.expr(s.Func)
	case *ast.ReturnStmt:
		d.exprs(s.Exprs)
	}
}

func (d *declaredParams) exprs(list []ast.Expr) {
	for _, e := range list {
		d.expr(e)
	}
}

func (d *declaredParams) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.IdentExpr:
		// params anywhere but as the function of a call read below.
		d.unreadable = d.unreadable || e.Value == "params" || dynamicGlobals[e.Value]
	case *ast.FuncCallExpr:
		if id, ok := e.Func.(*ast.IdentExpr); ok && id.Value == "params" {
			d.call(e)
			return
		}
		d.expr(e.Func)
		d.expr(e.Receiver)
		d.exprs(e.Args)
	case *ast.AttrGetExpr:
		d.expr(e.Object)
		d.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			d.expr(f.Key)
			d.expr(f.Value)
		}
	case *ast.LogicalOpExpr:
		d.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.RelationalOpExpr:
		d.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.StringConcatOpExpr:
		d.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.ArithmeticOpExpr:
		d.exprs([]ast.Expr{e.Lhs, e.Rhs})
	case *ast.UnaryMinusOpExpr:
		d.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		d.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		d.expr(e.Expr)
	case *ast.FunctionExpr:
		d.stmts(e.Stmts)
	}
}

// call reads one params(...) call: a literal table whose keys are all
// names, or the text is unreadable.
func (d *declaredParams) call(e *ast.FuncCallExpr) {
	d.calls++
	if d.calls == 1 {
		d.line = e.Line()
	}
	t, ok := onlyArg(e.Args)
	if !ok {
		d.unreadable = true
		d.exprs(e.Args)
		return
	}
	for _, f := range t.Fields {
		key, ok := f.Key.(*ast.StringExpr)
		if !ok {
			d.unreadable = true
			d.expr(f.Key)
			d.expr(f.Value)
			continue
		}
		d.expr(f.Value)
		def := f.Value
		if _, twice := d.defaults[key.Value]; twice {
			def = nil
		}
		d.defaults[key.Value] = def
	}
}

func onlyArg(args []ast.Expr) (*ast.TableExpr, bool) {
	if len(args) != 1 {
		return nil, false
	}
	t, ok := args[0].(*ast.TableExpr)
	return t, ok
}

// constant returns the value of a default the text writes as a constant
// (a number, string, boolean or list of numbers or strings), nil for
// anything else.
func constant(L *lua.LState, e ast.Expr) lua.LValue {
	switch e := e.(type) {
	case *ast.NumberExpr:
		if f, ok := parseLuaNumber(e.Value); ok {
			return lua.LNumber(f)
		}
	case *ast.UnaryMinusOpExpr:
		if n, ok := constant(L, e.Expr).(lua.LNumber); ok {
			return -n
		}
	case *ast.StringExpr:
		return lua.LString(e.Value)
	case *ast.TrueExpr:
		return lua.LTrue
	case *ast.FalseExpr:
		return lua.LFalse
	case *ast.TableExpr:
		t := L.NewTable()
		for _, f := range e.Fields {
			v := constant(L, f.Value)
			if f.Key != nil || v == nil {
				return nil
			}
			if _, ok := v.(*lua.LTable); ok {
				return nil
			}
			t.Append(v)
		}
		if _, err := paramKind(t); err != nil {
			return nil
		}
		return t
	}
	return nil
}
