package luabind

import (
	lua "github.com/yuin/gopher-lua"

	"wtd/engine"
)

func (b *binding) openSweep(L *lua.LState) {
	L.SetGlobal("sweep", moduleTable(L, "sweep", map[string]lua.LGFunction{
		"threads": b.sweepThreads,
	}))
}

// sweep.threads{ workload = { m:workload options }, threads = {1, 2, 4, ...}, duration = seconds,
// server = m, name = "threads", <label> = value, ... } -> { points = {{threads, ops_per_sec, p50_micros, p99_micros}, ...}, knee, reason }
//
// Runs the workload once per thread count, each as its own step named name
// and labelled threads = N (and the other keys as labels), and returns the
// table and the knee (workload.Knee): nil, with the reason, when the counts
// did not reach it. server defaults to the run's only running server;
// duration, if given, overrides the workload's bound.
func (b *binding) sweepThreads(L *lua.LState) int {
	t := L.CheckTable(1)
	var wt, threads *lua.LTable
	var srv server
	opt := engine.SweepOptions{Labels: map[string]any{}}
	t.ForEach(func(k, v lua.LValue) {
		key, ok := k.(lua.LString)
		if !ok {
			raisef(L, "sweep.threads: keys must be names (workload, threads, duration, server, name or a label), got %s", describe(k))
		}
		switch key {
		case "workload":
			if wt, ok = v.(*lua.LTable); !ok {
				raisef(L, "sweep.threads: workload must be a table of m:workload options, got %s", describe(v))
			}
		case "threads":
			if threads, ok = v.(*lua.LTable); !ok {
				raisef(L, "sweep.threads: threads must be a list of thread counts, got %s", describe(v))
			}
		case "duration":
			opt.Duration = seconds(options{L: L, fname: "sweep.threads", t: t}, "duration")
		default:
			stepKey(L, "sweep.threads", key, v, &opt.Step, &srv, opt.Labels)
		}
	})
	if wt == nil || threads == nil {
		raisef(L, "sweep.threads: workload = {...} and threads = {...} are required")
	}
	for _, n := range numbers(options{L: L, fname: "sweep.threads", t: t}, "threads", threads) {
		if n != float64(int64(n)) {
			raisef(L, "sweep.threads: threads must be whole numbers, got %v", n)
		}
		opt.Threads = append(opt.Threads, clampInt(int64(n)))
	}
	if srv == nil {
		if srv = b.run.DefaultServer(); srv == nil {
			raisef(L, "sweep.threads: give server = m (no single server is running)")
		}
	}
	spec := b.workloadSpec(L, srv, tableOptions(L, wt, "sweep.threads: workload", workloadKeys...))
	bound := opt.Duration // the sweep's duration applies, else the workload's own
	if bound == 0 {
		bound = spec.Duration
	}
	end := func() {}
	opt.Progress = func(int) func(done, total int64) {
		end() // the previous thread count's workload is over
		var update func(done, total int64)
		update, end = b.progress("workload "+spec.NS, bound)
		return update
	}
	res, err := b.run.SweepThreads(b.ctx, srv, spec, opt)
	end()
	if err != nil {
		b.raise(L, "sweep.threads", err)
	}
	v, err := structToLua(L, res)
	if err != nil {
		b.raise(L, "sweep.threads", err)
	}
	L.Push(v)
	return 1
}
