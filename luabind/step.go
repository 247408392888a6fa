package luabind

import (
	"context"
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

func (b *binding) openStep(L *lua.LState) {
	L.SetGlobal("step", L.NewFunction(b.step))
}

// step{ name = "...", run = function() ... end [, server = m] [, ns = "db.coll"] [, label = value, ...] } -> what run returned
//
// Runs run as a recorded step (engine.Run.Step): every other key is a
// label (round = 1, cacheSizeGB = 0.25, warmup = "none", ...). The value
// run returns is the step's result: a table from m:workload or m:load
// hands the engine the original result; other values are recorded as
// plain values. An error in run fails the step (recorded) and is raised
// again as it was, with its file:line.
func (b *binding) step(L *lua.LState) int {
	t := L.CheckTable(1)
	spec := stepSpec{Labels: map[string]any{}}
	var run *lua.LFunction
	t.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok {
			raisef(L, "step: keys must be names (name, run, server, ns or a label), got %s", describe(k))
		}
		switch key {
		case "run":
			if run, ok = v.(*lua.LFunction); !ok {
				raisef(L, "step: run must be a function, got %s", describe(v))
			}
		case "ns":
			ns, ok := v.(lua.LString)
			if !ok {
				raisef(L, "step: ns must be a string \"db.collection\", got %s", describe(v))
			}
			spec.NS = string(ns)
		default:
			stepKey(L, "step", key, v, &spec.Name, &spec.Server, spec.Labels)
		}
	})
	if spec.Name == "" {
		raisef(L, "step: name is required")
	}
	if run == nil {
		raisef(L, "step %s: run = function() ... end is required", spec.Name)
	}
	var ret lua.LValue = lua.LNil
	var luaErr lua.LValue
	err := b.run.Step(b.ctx, spec, func(context.Context) (any, error) {
		if err := L.CallByParam(lua.P{Fn: run, NRet: 1, Protect: true}); err != nil {
			var ae *lua.ApiError
			if errors.As(err, &ae) {
				luaErr = ae.Object
				// The Go error behind it tells the engine what failed (a
				// server that went down).
				se := &ScriptError{Msg: ae.Object.String()}
				if behind := b.raisedBehind(se.Msg); behind != nil {
					se.errs = []error{behind}
				}
				return nil, se
			}
			return nil, err
		}
		ret = L.Get(-1)
		L.Pop(1)
		return stepResult(L, ret)
	})
	if luaErr != nil {
		L.Error(luaErr, 0)
	}
	if err != nil {
		b.raise(L, "step "+spec.Name, err)
	}
	L.Push(ret)
	return 1
}

// stepResult converts what a step's run returned for the engine.
func stepResult(L *lua.LState, v lua.LValue) (any, error) {
	if t, ok := v.(*lua.LTable); ok {
		if res, ok := goResult(L, t); ok {
			return res, nil
		}
	}
	g, err := fromLua(v)
	if err != nil {
		return nil, fmt.Errorf("run returned a value that cannot be recorded: %w", err)
	}
	return g, nil
}

func userServer(ud *lua.LUserData) (server, bool) {
	if ud == nil {
		return nil, false
	}
	s, ok := ud.Value.(server)
	return s, ok
}

// stepKey takes a key step{} and sweep.threads{} share: name (a non-empty
// string), server (a server handle) or, any other key, a label.
func stepKey(L *lua.LState, fname string, key lua.LString, v lua.LValue, name *string, srv *server, labels map[string]any) {
	switch key {
	case "name":
		s, ok := v.(lua.LString)
		if !ok || s == "" {
			raisef(L, "%s: name must be a non-empty string, got %s", fname, describe(v))
		}
		*name = string(s)
	case "server":
		ud, _ := v.(*lua.LUserData)
		var ok bool
		if *srv, ok = userServer(ud); !ok {
			raisef(L, "%s: server must be a server handle (from mongod.start or mongod.connect), got %s", fname, describe(v))
		}
	default:
		g, err := fromLua(v)
		if err != nil {
			raisef(L, "%s: label %s: %v", fname, key, err)
		}
		labels[string(key)] = g
	}
}
