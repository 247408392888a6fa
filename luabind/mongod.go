package luabind

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// serverType is the metatable name of server handles.
const serverType = "wtd.server"

// serverFields are the fields a handle serves besides its methods.
var serverFields = []string{"name", "pid", "started", "uri"}

func (b *binding) openMongod(L *lua.LState) {
	methods := setFuncs(L, map[string]lua.LGFunction{
		"restart":          b.serverRestart,
		"stop":             b.serverStop,
		"set_parameter":    b.serverSetParameter,
		"get_parameter":    b.serverGetParameter,
		"reconfigure":      b.serverReconfigure,
		"server_status":    b.serverStatus,
		"command":          b.serverCommand,
		"collection_stats": b.serverCollectionStats,
		"load":             b.serverLoad,
		"workload":         b.serverWorkload,
		"create_index":     b.serverCreateIndex,
	})
	mt := L.NewTypeMetatable(serverType)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		s := checkServer(L, 1)
		key := L.CheckString(2)
		switch key {
		case "name":
			L.Push(lua.LString(s.name()))
		case "uri":
			L.Push(lua.LString(s.URI()))
		case "pid":
			L.Push(lua.LNumber(s.PID()))
		case "started":
			L.Push(lua.LBool(s.Started()))
		default:
			m := methods.RawGetString(key)
			if m == lua.LNil {
				var names []string
				methods.ForEach(func(k, _ lua.LValue) { names = append(names, k.String()) })
				sort.Strings(names)
				raisef(L, "server %s has no field %q%s (fields: %s; methods: %s)", s.name(), key, didYouMean(key, append(names, serverFields...)),
					strings.Join(serverFields, ", "), strings.Join(names, ", "))
			}
			L.Push(m)
		}
		return 1
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		raisef(L, "server %s: a server handle is read-only", checkServer(L, 1).name())
		return 0
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		s := checkServer(L, 1)
		L.Push(lua.LString("server " + s.name() + " " + s.URI()))
		return 1
	}))
	L.SetGlobal("mongod", moduleTable(L, "mongod", map[string]lua.LGFunction{
		"start":   b.mongodStart,
		"connect": b.mongodConnect,
		"service": b.mongodService,
	}))
}

// checkServer returns the server handle at argument n.
func checkServer(L *lua.LState, n int) server {
	ud, ok := L.Get(n).(*lua.LUserData)
	if ok {
		if s, ok := ud.Value.(server); ok {
			return s
		}
	}
	L.ArgError(n, "server handle expected (from mongod.start or mongod.connect; call methods with m:method)")
	return nil
}

func pushServer(L *lua.LState, s server) {
	ud := L.NewUserData()
	ud.Value = s
	L.SetMetatable(ud, L.GetTypeMetatable(serverType))
	L.Push(ud)
}

// mongod.start{ cacheSizeGB=, engineConfig=, syncdelay=, setParameter={name=value,...},
// port=, dbpath=, args={...} } -> server
//
// Starts a fresh server on 127.0.0.1 (port 0 or absent: a free port; no
// dbpath: a new one in the run's directory).
func (b *binding) mongodStart(L *lua.LState) int {
	o := checkOptions(L, 1, "mongod.start", append(hostctl.OptionNames(), "port", "dbpath")...)
	so := engine.ServerOptions{Settings: settingOptions(o).To}
	port, _ := o.integer("port")
	if port < 0 || port > 65535 {
		raisef(L, "mongod.start: port %d out of range [0, 65535]", port)
	}
	so.Port = int(port)
	so.DBPath, _ = o.str("dbpath")
	s, err := b.run.StartServer(b.ctx, so)
	if err != nil {
		b.raise(L, "mongod.start", err)
	}
	pushServer(L, s)
	return 1
}

// settingOptions reads the options that carry knobs (hostctl.OptionNames:
// the knob table's options and args), each as its type is, into a change
// of the options given.
func settingOptions(o options) hostctl.SettingsChange {
	var ch hostctl.SettingsChange
	for _, name := range hostctl.OptionNames() {
		var v any
		var ok bool
		switch hostctl.OptionType(name) {
		case hostctl.KnobFloat:
			v, ok = o.number(name)
		case hostctl.KnobString:
			v, ok = o.str(name)
		case hostctl.KnobMap:
			v, ok = setParameters(o, name)
		case hostctl.KnobList:
			v, ok = o.strings(name)
		}
		if !ok {
			continue
		}
		if err := ch.Set(name, v); err != nil {
			raisef(o.L, "%s: %v", o.fname, err)
		}
	}
	return ch
}

// setParameters reads setParameter = { name = number | boolean | string }
// (option is its name).
func setParameters(o options, option string) (map[string]string, bool) {
	t, ok := o.table(option)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	t.ForEach(func(k, v lua.LValue) {
		name, isString := k.(lua.LString)
		if !isString {
			raisef(o.L, "%s: %s keys must be parameter names, got %s", o.fname, option, describe(k))
		}
		switch x := v.(type) {
		case lua.LNumber:
			out[string(name)] = formatNumber(float64(x))
		case lua.LBool:
			out[string(name)] = strconv.FormatBool(bool(x))
		case lua.LString:
			out[string(name)] = string(x)
		default:
			raisef(o.L, "%s: %s.%s must be a number, boolean or string, got %s", o.fname, option, name, describe(v))
		}
	})
	return out, true
}

// maxConnectSeconds bounds mongod.connect's timeout.
const maxConnectSeconds = 3600

// mongod.connect{ uri = "mongodb://127.0.0.1:27017", timeout = 5 } -> server
//
// Attaches to a running server on loopback, directly (the hosts it
// advertises are not followed); mongodb+srv:// and URIs of several hosts
// are refused. Connecting fails after timeout seconds (default 5). wtd
// does not manage the process (restart fails).
func (b *binding) mongodConnect(L *lua.LState) int {
	o := checkOptions(L, 1, "mongod.connect", "uri", "timeout")
	uri, ok := o.str("uri")
	if !ok {
		raisef(L, "mongod.connect: uri is required")
	}
	var timeout time.Duration
	if sec, ok := o.number("timeout"); ok {
		if !(sec > 0 && sec <= maxConnectSeconds) {
			raisef(L, "mongod.connect: timeout %v seconds out of range (0, %d]", sec, maxConnectSeconds)
		}
		timeout = time.Duration(sec * float64(time.Second))
	}
	s, err := b.run.ConnectServer(b.ctx, uri, timeout)
	if err != nil {
		b.raise(L, "mongod.connect", err)
	}
	pushServer(L, s)
	return 1
}

// mongod.service{ unit = "mongod", config = "/etc/mongod.conf", uri = "mongodb://127.0.0.1:27017",
// service_manager = {"systemctl"}, timeout = 120 } -> server
//
// Attaches to a server a service manager runs, which m:restart restarts
// with its YAML config file changed; what the run changes is put back at
// its end. The unit must be allowed by the operator (--allow-service).
func (b *binding) mongodService(L *lua.LState) int {
	o := checkOptions(L, 1, "mongod.service", "unit", "config", "uri", "service_manager", "timeout")
	var so engine.ServiceOptions
	var ok bool
	if so.Unit, ok = o.str("unit"); !ok {
		raisef(L, "mongod.service: unit is required")
	}
	if so.Config, ok = o.str("config"); !ok {
		raisef(L, "mongod.service: config is required (the YAML config file the unit starts the server with)")
	}
	if so.URI, ok = o.str("uri"); !ok {
		raisef(L, "mongod.service: uri is required")
	}
	if m, ok := o.strings("service_manager"); ok {
		if len(m) == 0 || m[0] == "" {
			raisef(L, "mongod.service: service_manager must name a command, e.g. {\"systemctl\"}")
		}
		so.Manager = m
	}
	if sec, ok := o.number("timeout"); ok {
		if !(sec > 0 && sec <= maxConnectSeconds) {
			raisef(L, "mongod.service: timeout %v seconds out of range (0, %d]", sec, maxConnectSeconds)
		}
		so.Timeout = time.Duration(sec * float64(time.Second))
	}
	s, err := b.run.ServiceServer(b.ctx, so)
	if err != nil {
		b.raise(L, "mongod.service", err)
	}
	pushServer(L, s)
	return 1
}

// keepOption reads an optional { keep = true } at argument n.
func keepOption(L *lua.LState, n int, fname string) bool {
	if L.Get(n) == lua.LNil {
		return false
	}
	o := checkOptions(L, n, fname, "keep")
	keep, _ := o.boolean("keep")
	return keep
}

// m:restart{ cacheSizeGB=, engineConfig=, syncdelay=, setParameter={...}, args={...}, keep= }
//
// Restarts the server on the same dbpath and port with the settings given
// changed and the rest kept (setParameter is merged, args replaced).
func (b *binding) serverRestart(L *lua.LState) int {
	s := checkServer(L, 1)
	o := checkOptions(L, 2, "restart", append(hostctl.OptionNames(), "keep")...)
	ch := engine.ServerChanges{SettingsChange: settingOptions(o)}
	ch.Keep, _ = o.boolean("keep")
	if err := s.Restart(b.ctx, ch); err != nil {
		b.raise(L, "restart", err)
	}
	return 0
}

// m:stop()
func (b *binding) serverStop(L *lua.LState) int {
	s := checkServer(L, 1)
	if err := s.Stop(b.ctx); err != nil {
		b.raise(L, "stop", err)
	}
	return 0
}

// m:set_parameter(name, value) -> previous value
func (b *binding) serverSetParameter(L *lua.LState) int {
	s := checkServer(L, 1)
	name := L.CheckString(2)
	v := L.CheckAny(3)
	switch v.(type) {
	case lua.LNumber, lua.LBool, lua.LString:
	default:
		L.ArgError(3, "number, boolean or string expected, got "+v.Type().String())
	}
	value, _ := toBSON(v)
	keep := keepOption(L, 4, "set_parameter")
	was, err := s.SetParameterKeep(b.ctx, name, value, keep)
	if err != nil {
		b.raise(L, "set_parameter", err)
	}
	L.Push(toLua(L, was))
	return 1
}

// m:get_parameter(name) -> value
func (b *binding) serverGetParameter(L *lua.LState) int {
	s := checkServer(L, 1)
	name := L.CheckString(2)
	v, err := s.GetParameter(b.ctx, name)
	if err != nil {
		b.raise(L, "get_parameter", err)
	}
	L.Push(toLua(L, v))
	return 1
}

// m:reconfigure(wt_config_string)
//
// Changes WiredTiger's runtime configuration (wiredTigerEngineRuntimeConfig).
func (b *binding) serverReconfigure(L *lua.LState) int {
	s := checkServer(L, 1)
	cfg := L.CheckString(2)
	if err := s.ReconfigureKeep(b.ctx, cfg, keepOption(L, 3, "reconfigure")); err != nil {
		b.raise(L, "reconfigure", err)
	}
	return 0
}

// m:server_status() -> table
//
// The full serverStatus: nested tables, numbers as numbers, dates as
// milliseconds since the epoch, ObjectIds as hex strings.
func (b *binding) serverStatus(L *lua.LState) int {
	s := checkServer(L, 1)
	raw, err := s.ServerStatus(b.ctx)
	if err != nil {
		b.raise(L, "server_status", err)
	}
	L.Push(rawDocToLua(L, raw, 0))
	return 1
}

// m:command(name [, args [, db]]) -> reply
// m:command{ name = value } -> reply
//
// The first form runs { name: args[name] or 1, <the other args, sorted> }
// on db ("admin" by default); the second a command of exactly one key on
// admin. Whole numbers are sent as int32 (int64 when larger). On a server
// wtd did not start only commands that read run, unless the operator
// allowed the others (see engine.Server.PlaybookCommand).
func (b *binding) serverCommand(L *lua.LState) int {
	s := checkServer(L, 1)
	var cmd bson.D
	db := "admin"
	switch first := L.CheckAny(2).(type) {
	case lua.LString:
		args := L.OptTable(3, L.NewTable())
		db = L.OptString(4, "admin")
		var head any = int32(1)
		if v := args.RawGetString(string(first)); v != lua.LNil {
			h, err := toBSON(v)
			if err != nil {
				raisef(L, "command %s: %v", first, err)
			}
			head = h
		}
		rest, err := tableToDoc(args, 0)
		if err != nil {
			raisef(L, "command %s: %v", first, err)
		}
		cmd = bson.D{{Key: string(first), Value: head}}
		for _, e := range rest {
			if e.Key != string(first) {
				cmd = append(cmd, e)
			}
		}
	case *lua.LTable:
		doc, err := tableToDoc(first, 0)
		if err != nil {
			raisef(L, "command: %v", err)
		}
		if len(doc) != 1 || first.Len() > 0 {
			raisef(L, "command: a command table must have exactly one name = value, got %d keys: write m:command(name, {args...}) for more", len(doc))
		}
		cmd = doc
	default:
		L.ArgError(2, "command name or { name = value } expected")
	}
	reply, err := s.PlaybookCommand(b.ctx, db, cmd)
	if err != nil {
		b.raise(L, "command "+cmd[0].Key, err)
	}
	L.Push(rawDocToLua(L, reply, 0))
	return 1
}

// m:collection_stats(ns) -> { count = n, avg_obj_size = bytes }
func (b *binding) serverCollectionStats(L *lua.LState) int {
	s := checkServer(L, 1)
	ns := L.CheckString(2)
	count, avg, err := s.CollectionStats(b.ctx, ns)
	if err != nil {
		b.raise(L, "collection_stats", err)
	}
	t := L.NewTable()
	t.RawSetString("count", lua.LNumber(count))
	t.RawSetString("avg_obj_size", lua.LNumber(avg))
	L.Push(t)
	return 1
}

// m:load{ ns=, docs=, doc_bytes=, batch=1000, threads=1, start_id=0, date= } -> result
//
// Inserts docs incompressible documents of doc_bytes BSON bytes with _id
// start_id... (date = { field=, from=, to= } adds a date field: see
// dateOption). The result is workload.LoadResult by its JSON names: docs,
// bytes, elapsed_ns, docs_per_sec, mb_per_sec, batch = {...}, errors.
func (b *binding) serverLoad(L *lua.LState) int {
	s := checkServer(L, 1)
	o := checkOptions(L, 2, "load", "ns", "docs", "doc_bytes", "batch", "threads", "start_id", "date")
	var spec workload.LoadSpec
	var ok bool
	if spec.NS, ok = o.str("ns"); !ok {
		raisef(L, "load: ns is required (\"db.collection\")")
	}
	if spec.Docs, ok = o.integer("docs"); !ok {
		raisef(L, "load: docs is required")
	}
	docBytes, ok := o.integer("doc_bytes")
	if !ok {
		raisef(L, "load: doc_bytes is required")
	}
	spec.DocBytes = clampInt(docBytes)
	batch, _ := o.integer("batch")
	threads, _ := o.integer("threads")
	spec.Batch, spec.Threads = clampInt(batch), clampInt(threads)
	spec.StartID, _ = o.integer("start_id")
	spec.Date = dateOption(o)
	update, end := b.progress("load "+spec.NS, 0)
	res, err := s.Load(b.ctx, spec, update)
	end()
	if err != nil {
		b.raise(L, "load", err)
	}
	t, err := resultToLua(L, res)
	if err != nil {
		b.raise(L, "load", err)
	}
	L.Push(t)
	return 1
}

// m:workload{ ns=, ops= | duration= (seconds), threads=1, mix={read=, update=, insert=, scan=, rmw=, query=},
// working_set=, distribution="uniform", doc_bytes=, seed=, key_space=, insert_start_id=, date=,
// workload=, scan_max=, query=, hot_fraction=, hot_ops=, rate=, rate_step=, warmup=, watch=, watch_interval= } -> result
//
// ns defaults to the namespace the playbook loaded last, mix to
// {read = 1} (or the preset's). key_space and doc_bytes default as
// workload.Complete works them out: collStats' count, the load's document
// size (else collStats' average); working_set is a fraction of the key
// space when <= 1, MB when > 1, or a string "60MB", "2GB", "50%".
// distribution is "uniform", "zipfian", "scrambled_zipfian", "latest" or
// "hotspot" (engine/workload checks it). The other
// options are read by workloadOptions. The result
// is workload.Result by its JSON names: elapsed_ns, ops = { read =
// { count, errors, ops_per_sec, p50_micros, p99_micros, ... } }, total,
// series, next_insert_id, and rate, behind, warmup, watch.
func (b *binding) serverWorkload(L *lua.LState) int {
	s := checkServer(L, 1)
	spec := b.workloadSpec(L, s, checkOptions(L, 2, "workload", workloadKeys...))
	update, end := b.progress("workload "+spec.NS, spec.Duration)
	res, err := s.Workload(b.ctx, spec, update)
	end()
	if err != nil {
		b.raise(L, "workload", err)
	}
	t, err := resultToLua(L, res)
	if err != nil {
		b.raise(L, "workload", err)
	}
	L.Push(t)
	return 1
}

// workloadSpec reads the options of m:workload (o) into a spec for s.
func (b *binding) workloadSpec(L *lua.LState, s server, o options) workload.Spec {
	var spec workload.Spec
	loads := b.run.Loads()
	var ok bool
	if spec.NS, ok = o.str("ns"); !ok {
		if spec.NS = loads.Last(); spec.NS == "" {
			raisef(L, "workload: ns is required (no m:load gave a default)")
		}
	}
	spec.Ops, _ = o.integer("ops")
	if sec, ok := o.number("duration"); ok {
		if !(sec >= 0 && sec <= maxSleepSeconds) {
			raisef(L, "workload: duration %v seconds out of range [0, %d]", sec, maxSleepSeconds)
		}
		spec.Duration = time.Duration(sec * float64(time.Second))
	}
	threads, _ := o.integer("threads")
	spec.Threads = clampInt(threads)
	if mt, ok := o.table("mix"); ok {
		mo := tableOptions(L, mt, o.fname+": mix", workload.OpRead, workload.OpUpdate, workload.OpInsert, workload.OpScan, workload.OpRMW, workload.OpQuery)
		spec.Mix.Read, _ = mo.number(workload.OpRead)
		spec.Mix.Update, _ = mo.number(workload.OpUpdate)
		spec.Mix.Insert, _ = mo.number(workload.OpInsert)
		spec.Mix.Scan, _ = mo.number(workload.OpScan)
		spec.Mix.RMW, _ = mo.number(workload.OpRMW)
		spec.Mix.Query, _ = mo.number(workload.OpQuery)
	}
	spec.Distribution, _ = o.str("distribution")
	spec.Seed, _ = o.integer("seed")
	spec.InsertStartID, _ = o.integer("insert_start_id")
	spec.Date = dateOption(o)
	docBytes, hasDocBytes := o.integer("doc_bytes")
	spec.DocBytes = clampInt(docBytes)
	keySpace, hasKeySpace := o.integer("key_space")
	spec.KeySpace = keySpace
	d := workload.Defaults{KeySpace: !hasKeySpace, DocBytes: !hasDocBytes}
	if ws, unit, ok := workingSet(o); ok {
		d.WorkingSet = &workload.WorkingSet{Size: ws, Unit: unit}
	}
	spec, err := workload.Complete(b.ctx, s, loads, spec, d)
	if err != nil {
		b.raise(L, "workload", err)
	}
	workloadOptions(o, &spec)
	return spec
}

// workingSet reads working_set: a number (<= 1 a fraction, > 1 MB) or a
// string "60MB", "2GB", "50%" or a number.
func workingSet(o options) (float64, string, bool) {
	v := o.get("working_set")
	switch x := v.(type) {
	case *lua.LNilType:
		return 0, "", false
	case lua.LNumber:
		if float64(x) > 1 {
			return float64(x), workload.UnitMB, true
		}
		return float64(x), workload.UnitFraction, true
	case lua.LString:
		s := strings.ToUpper(strings.TrimSpace(string(x)))
		for _, u := range []struct {
			suffix string
			scale  float64
			unit   string
		}{{"%", 0.01, workload.UnitFraction}, {"MB", 1, workload.UnitMB}, {"GB", 1024, workload.UnitMB}} {
			if num, ok := strings.CutSuffix(s, u.suffix); ok {
				f, ok := parseLuaNumber(num)
				if !ok {
					break
				}
				return f * u.scale, u.unit, true
			}
		}
		if f, ok := parseLuaNumber(s); ok {
			return workingSet(options{L: o.L, fname: o.fname, t: tableWith(o.L, "working_set", lua.LNumber(f))})
		}
	}
	o.wrongType("working_set", `a fraction (<= 1), MB (> 1) or a string such as "60MB", "2GB" or "50%"`, v)
	return 0, "", false
}

func tableWith(L *lua.LState, key string, v lua.LValue) *lua.LTable {
	t := L.NewTable()
	t.RawSetString(key, v)
	return t
}

// clampInt narrows a whole number for an int field; values beyond int's
// range saturate, so the engine's range check names them.
func clampInt(v int64) int {
	return int(max(min(v, math.MaxInt32), math.MinInt32))
}

// progress returns the engine progress callback for label, nil when the
// playbook has no progress display.
// duration is the task's time bound (0: bounded by its count only). end,
// called once the engine call returned, tells the display the task is over
// (whatever the display's own clock says).
func (b *binding) progress(label string, duration time.Duration) (update func(done, total int64), end func()) {
	if b.env.Progress == nil {
		return nil, func() {}
	}
	var last atomic.Int64
	update = func(done, total int64) {
		last.Store(done)
		b.env.Progress(label, done, total, duration)
	}
	return update, func() { b.env.Progress(label, last.Load(), -1, duration) }
}
