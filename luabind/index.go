package luabind

import (
	"math"
	"time"

	lua "github.com/yuin/gopher-lua"

	"wtd/engine"
	"wtd/engine/workload"
)

// m:create_index{ ns=, key=, expireAfterSeconds=, unique=, name=, keep= } -> name
//
// key is a field name ("createdAt", ascending), { field = 1 | -1 } for one
// field, or { {"a", 1}, {"b", -1} } for a compound key in order.
// expireAfterSeconds makes it a TTL index (a single field holding dates).
// On a server wtd did not start the index is dropped at the end of the run
// unless keep = true.
func (b *binding) serverCreateIndex(L *lua.LState) int {
	s := checkServer(L, 1)
	o := checkOptions(L, 2, "create_index", "ns", "key", "expireAfterSeconds", "unique", "name", "keep")
	var spec engine.IndexSpec
	var ok bool
	if spec.NS, ok = o.str("ns"); !ok {
		raisef(L, "create_index: ns is required (\"db.collection\")")
	}
	spec.Keys = indexKeys(o, "key")
	spec.Name, _ = o.str("name")
	spec.Unique, _ = o.boolean("unique")
	spec.Keep, _ = o.boolean("keep")
	if e, ok := o.integer("expireAfterSeconds"); ok {
		spec.ExpireAfterSeconds = &e
	}
	name, err := s.CreateIndex(b.ctx, spec)
	if err != nil {
		b.raise(L, "create_index", err)
	}
	L.Push(lua.LString(name))
	return 1
}

// indexKeys reads the ordered fields at key (an index's key, a query's
// sort): "field" | { field = dir } | { {"a", 1}, {"b", -1} }.
func indexKeys(o options, key string) []engine.IndexKey {
	const want = `a field name, { field = 1 } or { {"a", 1}, {"b", -1} }`
	switch v := o.get(key).(type) {
	case lua.LString:
		return []engine.IndexKey{{Field: string(v), Dir: 1}}
	case *lua.LTable:
		var keys []engine.IndexKey
		if v.Len() > 0 {
			for i := 1; i <= v.Len(); i++ {
				pair, ok := v.RawGetInt(i).(*lua.LTable)
				if !ok || pair.Len() != 2 {
					o.wrongType(key, want, v)
				}
				field, fok := pair.RawGetInt(1).(lua.LString)
				dir, dok := pair.RawGetInt(2).(lua.LNumber)
				if !fok || !dok {
					o.wrongType(key, want, v)
				}
				keys = append(keys, engine.IndexKey{Field: string(field), Dir: int(dir)})
			}
			return keys
		}
		v.ForEach(func(k, d lua.LValue) {
			field, fok := k.(lua.LString)
			dir, dok := d.(lua.LNumber)
			if !fok || !dok {
				o.wrongType(key, want, v)
			}
			keys = append(keys, engine.IndexKey{Field: string(field), Dir: int(dir)})
		})
		if len(keys) != 1 {
			raisef(o.L, `%s: %s { field = dir } names %d fields: a compound key needs its order, as { {"a", 1}, {"b", -1} }`, o.fname, key, len(keys))
		}
		return keys
	case *lua.LNilType:
		raisef(o.L, "%s: %s is required (%s)", o.fname, key, want)
	default:
		o.wrongType(key, want, v)
	}
	return nil
}

// dateOption reads date = { field = "createdAt", from = seconds, to =
// seconds } of m:load and m:workload: without from, the field holds the
// time of the insert; with from and to, a moment drawn uniformly between
// them (seconds since the epoch, as os.time() gives).
func dateOption(o options) *workload.DateSpec {
	t, ok := o.table("date")
	if !ok {
		return nil
	}
	do := tableOptions(o.L, t, o.fname+": date", "field", "from", "to")
	d := &workload.DateSpec{}
	if d.Field, ok = do.str("field"); !ok {
		raisef(o.L, "%s: date.field is required", o.fname)
	}
	if from, ok := do.number("from"); ok {
		d.From = epochSeconds(from)
	}
	if to, ok := do.number("to"); ok {
		d.To = epochSeconds(to)
	}
	return d
}

func epochSeconds(s float64) time.Time {
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9))
}
