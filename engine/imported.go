package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/hostctl"
)

// CmdLineSettings reads the settings a server was started with from a
// getCmdLineOpts reply (as FTDC's metadata keeps it): argv, the parsed
// options and the knobs among them. CacheMaxBytes and Parameters are left
// for the caller.
func CmdLineSettings(opts bson.Raw) record.Settings {
	var st record.Settings
	if v, err := opts.LookupErr("argv"); err == nil {
		_ = v.Unmarshal(&st.Argv)
	}
	if v, err := opts.LookupErr("parsed"); err == nil {
		st.Parsed = jsonable(v)
		st.Settings, _ = hostctl.ReadSettings(func(key string) (string, bool) { return parsedScalar(opts, key) }, nil)
	}
	return st
}

// DeltaMetrics are the serverStatus metrics ServerDeltasOf reads.
func DeltaMetrics() []string {
	c := CacheMetric
	out := []string{c("pages read into cache"), c("bytes read into cache"), c("unmodified pages evicted"),
		c("modified pages evicted"), c("pages evicted by application threads"), record.AppThreadEvictMetric, record.AppThreadEvictMetric8,
		c("bytes currently in the cache"), c("tracked dirty bytes in the cache"), c("maximum bytes configured")}
	for _, op := range []string{"insert", "query", "update", "delete", "getmore", "command"} {
		out = append(out, "opcounters."+op)
	}
	return out
}

// ServerDeltasOf returns the server deltas between two samples of
// serverStatus taken elsewhere (an imported run's), with peaks the maxima
// of the metrics seen between them.
func ServerDeltasOf(before, after, peaks map[string]float64) *record.ServerDeltas {
	return serverDeltas(before, after, &peakTracker{peak: peaks}, nil)
}
