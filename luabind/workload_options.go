package luabind

import (
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/workload"
)

// workloadKeys are the options of m:workload (and of sweep.threads'
// workload).
var workloadKeys = []string{"ns", "ops", "duration", "threads", "mix", "working_set", "distribution",
	"doc_bytes", "seed", "key_space", "insert_start_id", "date",
	"workload", "scan_max", "query", "hot_fraction", "hot_ops", "rate", "rate_step", "warmup", "watch", "watch_interval"}

// workloadOptions reads the options of m:workload beyond the key space
// and the documents' size:
//
//	workload = "ycsb-a" .. "ycsb-f"      a preset; the options given override it field by field
//	                                      (its distribution is "scrambled_zipfian", D's "latest")
//	scan_max = 100                        scans read 1..scan_max documents
//	query = { filter = {...}, sort = "field", {field = 1} or {{"a", 1}, {"b", -1}}, limit = n, count = false }
//	hot_fraction = 0.2, hot_ops = 0.8    the hotspot distribution
//	rate = ops/s or {r1, r2, ...}, rate_step = seconds
//	warmup = seconds, "30s" or "1000 ops"
//	watch = {"serverStatus.path", ...}, watch_interval = seconds
//
// Without mix and workload the mix is {read = 1}.
func workloadOptions(o options, spec *workload.Spec) {
	spec.Workload, _ = o.str("workload")
	if o.get("mix") == lua.LNil && spec.Workload == "" {
		spec.Mix = workload.Mix{Read: 1}
	}
	scanMax, _ := o.integer("scan_max")
	spec.ScanMax = clampInt(scanMax)
	spec.HotFraction, _ = o.number("hot_fraction")
	spec.HotOps, _ = o.number("hot_ops")
	spec.Query = queryOption(o)
	switch v := o.get("rate").(type) {
	case *lua.LNilType:
	case lua.LNumber:
		spec.Rate = float64(v)
	case *lua.LTable:
		spec.RateSchedule = numbers(o, "rate", v)
	default:
		o.wrongType("rate", "operations per second or a list of them", v)
	}
	spec.RateStep = seconds(o, "rate_step")
	spec.Warmup, spec.WarmupOps = warmupOption(o)
	spec.Watch, _ = o.strings("watch")
	spec.WatchInterval = seconds(o, "watch_interval")
}

// seconds reads a duration in seconds, [0, 24 h].
func seconds(o options, key string) time.Duration {
	sec, ok := o.number(key)
	if !ok {
		return 0
	}
	if !(sec >= 0 && sec <= maxSleepSeconds) {
		raisef(o.L, "%s: %s %v seconds out of range [0, %d]", o.fname, key, sec, maxSleepSeconds)
	}
	return time.Duration(sec * float64(time.Second))
}

// numbers reads a list of numbers.
func numbers(o options, key string, t *lua.LTable) []float64 {
	if !isList(t) || t.Len() == 0 {
		o.wrongType(key, "a number or a non-empty list of numbers", t)
	}
	out := make([]float64, t.Len())
	for i := range out {
		n, ok := t.RawGetInt(i + 1).(lua.LNumber)
		if !ok {
			raisef(o.L, "%s: %s[%d] must be a number, got %s", o.fname, key, i+1, describe(t.RawGetInt(i+1)))
		}
		out[i] = float64(n)
	}
	return out
}

// warmupOption reads warmup: seconds (a number, or a string "30s"), or
// operations ("1000 ops").
func warmupOption(o options) (time.Duration, int64) {
	switch v := o.get("warmup").(type) {
	case *lua.LNilType:
		return 0, 0
	case lua.LNumber:
		return seconds(o, "warmup"), 0
	case lua.LString:
		s := strings.TrimSpace(string(v))
		if n, ok := strings.CutSuffix(s, "ops"); ok {
			if f, ok := parseLuaNumber(strings.TrimSpace(n)); ok && f == float64(int64(f)) {
				return 0, int64(f)
			}
		}
		if n, ok := strings.CutSuffix(s, "s"); ok {
			if f, ok := parseLuaNumber(strings.TrimSpace(n)); ok {
				return seconds(options{L: o.L, fname: o.fname, t: tableWith(o.L, "warmup", lua.LNumber(f))}, "warmup"), 0
			}
		}
	}
	o.wrongType("warmup", `seconds (a number or "30s") or operations ("1000 ops")`, o.get("warmup"))
	return 0, 0
}

// queryOption reads query = { filter =, sort =, limit =, count = }.
func queryOption(o options) *workload.QuerySpec {
	t, ok := o.table("query")
	if !ok {
		return nil
	}
	qo := tableOptions(o.L, t, o.fname+": query", "filter", "sort", "limit", "count")
	q := &workload.QuerySpec{Filter: bson.D{}}
	if ft, ok := qo.table("filter"); ok {
		d, err := tableToDoc(ft, 0)
		if err != nil {
			raisef(o.L, "%s: query.filter: %v", o.fname, err)
		}
		q.Filter = d
	}
	if qo.get("sort") != lua.LNil {
		for _, k := range indexKeys(qo, "sort") {
			q.Sort = append(q.Sort, bson.E{Key: k.Field, Value: int32(k.Dir)})
		}
	}
	q.Limit, _ = qo.integer("limit")
	q.Count, _ = qo.boolean("count")
	return q
}
