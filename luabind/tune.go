package luabind

import (
	"math"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"wtd/autotune"
	"wtd/compare"
)

func (b *binding) openTune(L *lua.LState) {
	L.SetGlobal("tune", L.NewFunction(b.tune))
}

// tuneKeys are the options of tune{}.
var tuneKeys = []string{"server", "knobs", "workload", "objective", "budget", "guard", "warm_up", "confirm", "keep_best", "seed"}

// tune{ server = m, knobs = { name = {lo, hi} | {lo, hi, log = true}, ... }, workload = { m:workload options },
// objective = { measure = "p99", subject_to = { measure = "< 20ms", ... } } | "p99",
// budget = { trials = 12, time = "45m" | seconds, initial = 6 }, guard = { p99_factor = 10, behind = 0.1 },
// warm_up = 5, confirm = 3, keep_best = false, seed = 1 } ->
// { best = {knob = value, ...}, baseline = {...}, trials = { {n, name, settings, objective, status, reason, step}, ... },
// confirm = {...}, verdict, improvement_pct, p, stopped, kept }
//
// Searches the knobs for the best objective (autotune.Run): warm_up
// seconds of the workload unmeasured, the baseline (the server's settings
// before the search), then the budget's trials,
// each a step "trial N" labelled with its settings, then confirm rounds of
// the best setting and the baseline by turns, judged by wtd compare's
// statistics. The server gets its settings back at the end unless
// keep_best keeps a confirmed better one.
func (b *binding) tune(L *lua.LState) int {
	o := checkOptions(L, 1, "tune", tuneKeys...)
	var srv server
	cfg := autotune.Config{Budget: autotune.Budget{Trials: autotune.DefaultTrials}, Guard: autotune.DefaultGuard, Confirm: 3, Seed: 1, WarmUp: autotune.DefaultWarmUp}
	if v := o.get("server"); v != lua.LNil {
		ud, _ := v.(*lua.LUserData)
		s, ok := userServer(ud)
		if !ok {
			raisef(L, "tune: server must be a server handle (from mongod.start, mongod.connect or mongod.service), got %s", describe(v))
		}
		srv = s
	} else if srv = b.run.DefaultServer(); srv == nil {
		raisef(L, "tune: give server = m (no single server is running)")
	}
	cfg.Knobs = tuneKnobs(o)
	wt, ok := o.table("workload")
	if !ok {
		raisef(L, "tune: workload = { m:workload options } is required: the work each trial measures")
	}
	cfg.Workload = b.workloadSpec(L, srv, tableOptions(L, wt, "tune: workload", workloadKeys...))
	if cfg.Workload.Ops == 0 && cfg.Workload.Duration == 0 && len(cfg.Workload.RateSchedule) == 0 {
		raisef(L, "tune: workload needs duration = seconds (or ops = N): each trial runs it once")
	}
	cfg.Objective = tuneObjective(o)
	tuneBudget(o, &cfg.Budget)
	tuneGuard(o, &cfg.Guard)
	if n, ok := o.integer("confirm"); ok {
		if n < 0 || n > autotune.MaxConfirm {
			raisef(L, "tune: confirm %d out of range [0, %d] (rounds of the best setting and of the baseline each)", n, autotune.MaxConfirm)
		}
		cfg.Confirm = int(n)
	}
	if f, ok := o.number("warm_up"); ok {
		if !(f >= 0 && f <= autotune.MaxWarmUp.Seconds()) {
			raisef(L, "tune: warm_up %v seconds out of range [0, %v] (the unmeasured workload before the baseline; 0: none)", f, autotune.MaxWarmUp.Seconds())
		}
		cfg.WarmUp = time.Duration(f * float64(time.Second))
	}
	cfg.KeepBest, _ = o.boolean("keep_best")
	if seed, ok := o.integer("seed"); ok {
		cfg.Seed = uint64(seed)
	}
	if err := b.run.CheckTune(srv, cfg); err != nil {
		b.raise(L, "tune", err)
	}
	cfg.Progress = func(step string, bound time.Duration) (func(done, total int64), func()) {
		return b.progress(step+" "+cfg.Workload.NS, bound)
	}
	res, err := b.run.Tune(b.ctx, srv, cfg)
	if err != nil {
		b.raise(L, "tune", err)
	}
	v, err := structToLua(L, res)
	if err != nil {
		b.raise(L, "tune", err)
	}
	L.Push(v)
	return 1
}

// tuneKnobs reads knobs = { name = {lo, hi}, name = {lo, hi, log = true} },
// in the knob table's order.
func tuneKnobs(o options) []autotune.Range {
	t, ok := o.table("knobs")
	if !ok {
		raisef(o.L, "tune: knobs = { name = {low, high}, ... } is required (knobs: %s)", strings.Join(autotune.Tunable(), ", "))
	}
	var out []autotune.Range
	t.ForEach(func(k, v lua.LValue) {
		name, isString := k.(lua.LString)
		if !isString {
			raisef(o.L, "tune: knobs keys must be knob names, got %s", describe(k))
		}
		rt, isTable := v.(*lua.LTable)
		if !isTable {
			raisef(o.L, "tune: knobs.%s must be a range {low, high} or {low, high, log = true}, got %s", name, describe(v))
		}
		count := 0
		rt.ForEach(func(k, _ lua.LValue) {
			count++
			if ks, isString := k.(lua.LString); isString && ks != "log" {
				raisef(o.L, "tune: knobs.%s: unknown option %q (a range is {low, high} or {low, high, log = true})", name, string(ks))
			}
		})
		lo, okLo := rt.RawGetInt(1).(lua.LNumber)
		hi, okHi := rt.RawGetInt(2).(lua.LNumber)
		logScale, hasLog := false, false
		if lv := rt.RawGetString("log"); lv != lua.LNil {
			bv, isBool := lv.(lua.LBool)
			if !isBool {
				raisef(o.L, "tune: knobs.%s: log must be a boolean, got %s", name, describe(lv))
			}
			logScale, hasLog = bool(bv), true
		}
		want := 2
		if hasLog {
			want = 3
		}
		if !okLo || !okHi || count != want || rt.Len() != 2 {
			raisef(o.L, "tune: knobs.%s must be a range {low, high} of two numbers (and log = true), got %s", name, rangeText(rt))
		}
		out = append(out, autotune.Range{Knob: string(name), Lo: float64(lo), Hi: float64(hi), Log: logScale})
	})
	if len(out) == 0 {
		raisef(o.L, "tune: knobs is empty: give at least one of %s", strings.Join(autotune.Tunable(), ", "))
	}
	order := map[string]int{}
	for i, n := range autotune.Tunable() {
		order[strings.ToLower(n)] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		oi, ok1 := order[strings.ToLower(out[i].Knob)]
		oj, ok2 := order[strings.ToLower(out[j].Knob)]
		if !ok1 || !ok2 {
			return out[i].Knob < out[j].Knob
		}
		return oi < oj
	})
	return out
}

// rangeText words a range table for an error: "{1, 2, 3}".
func rangeText(t *lua.LTable) string {
	var parts []string
	for i := 1; i <= t.Len(); i++ {
		parts = append(parts, t.RawGetInt(i).String())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// tuneObjective reads objective = "p99" or { measure = "p99", subject_to = { p99 = "< 20ms" } }.
func tuneObjective(o options) autotune.Objective {
	switch v := o.get("objective").(type) {
	case *lua.LNilType:
		raisef(o.L, "tune: objective is required: { measure = \"p99\" } or one of %s", strings.Join(compare.MeasureNames, ", "))
	case lua.LString:
		return autotune.Objective{Measure: string(v)}
	case *lua.LTable:
		oo := tableOptions(o.L, v, "tune: objective", "measure", "subject_to")
		var obj autotune.Objective
		var ok bool
		if obj.Measure, ok = oo.str("measure"); !ok {
			raisef(o.L, "tune: objective: measure is required (one of %s)", strings.Join(compare.MeasureNames, ", "))
		}
		if st, ok := oo.table("subject_to"); ok {
			var keys []string
			st.ForEach(func(k, val lua.LValue) {
				name, isString := k.(lua.LString)
				text, isText := val.(lua.LString)
				if !isString || !isText {
					raisef(o.L, "tune: objective: subject_to must be { measure = \"< value\" }, got %s = %s", describe(k), describe(val))
				}
				keys = append(keys, string(name))
				l, err := autotune.ParseLimit(string(name), string(text))
				if err != nil {
					raisef(o.L, "tune: objective: subject_to: %v", err)
				}
				obj.SubjectTo = append(obj.SubjectTo, l)
			})
			sort.Slice(obj.SubjectTo, func(i, j int) bool { return obj.SubjectTo[i].Measure < obj.SubjectTo[j].Measure })
		}
		return obj
	default:
		o.wrongType("objective", `a measure ("p99") or { measure = ..., subject_to = {...} }`, v)
	}
	return autotune.Objective{}
}

// tuneBudget reads budget = { trials =, time = seconds | "45m", initial = }.
func tuneBudget(o options, b *autotune.Budget) {
	t, ok := o.table("budget")
	if !ok {
		return
	}
	bo := tableOptions(o.L, t, "tune: budget", "trials", "time", "initial")
	if n, ok := bo.integer("trials"); ok {
		if n < 1 || n > autotune.MaxTrials {
			raisef(o.L, "tune: budget: trials %d out of range [1, %d]", n, autotune.MaxTrials)
		}
		b.Trials = int(n)
	}
	if n, ok := bo.integer("initial"); ok {
		if n < 0 || n > int64(b.Trials) {
			raisef(o.L, "tune: budget: initial %d out of range [0, trials = %d]", n, b.Trials)
		}
		b.Initial = int(n)
	}
	switch v := bo.get("time").(type) {
	case *lua.LNilType:
	case lua.LNumber:
		if !(v > 0 && float64(v) <= 7*24*3600) {
			raisef(o.L, "tune: budget: time %v seconds out of range (0, 1 week]", float64(v))
		}
		b.Time = time.Duration(float64(v) * float64(time.Second))
	case lua.LString:
		d, err := time.ParseDuration(strings.TrimSpace(string(v)))
		if err != nil || d <= 0 || d > 7*24*time.Hour {
			raisef(o.L, "tune: budget: time %q: want seconds or a duration such as \"45m\" or \"1h30m\", up to a week", string(v))
		}
		b.Time = d
	default:
		bo.wrongType("time", `seconds or a duration such as "45m"`, v)
	}
}

// tuneGuard reads guard = { p99_factor = 10, behind = 0.1 }.
func tuneGuard(o options, g *autotune.Guard) {
	t, ok := o.table("guard")
	if !ok {
		return
	}
	gox := tableOptions(o.L, t, "tune: guard", "p99_factor", "behind")
	if f, ok := gox.number("p99_factor"); ok {
		if f != 0 && !(f > 1 && !math.IsInf(f, 0)) {
			raisef(o.L, "tune: guard: p99_factor %v: want more than 1 (a trial stops when its p99 passes that many times the baseline's; 0: no p99 guard)", f)
		}
		g.P99Factor = f
	}
	if f, ok := gox.number("behind"); ok {
		if !(f >= 0 && f < 1) {
			raisef(o.L, "tune: guard: behind %v out of range [0, 1) (how far below its rate a trial's load may fall, 0.1 = 10%%; 0: no rate guard)", f)
		}
		g.Behind = f
	}
}
