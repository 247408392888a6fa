package cmdpolicy

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCommandWritesTellsReadsFromChanges: the commands m:command may send
// to a server wtd did not start, and the ones it may not, by what mongod
// would run (the first key, case-sensitive).
func TestCommandWritesTellsReadsFromChanges(t *testing.T) {
	pipeline := func(stages ...bson.D) bson.A {
		a := bson.A{}
		for _, s := range stages {
			a = append(a, s)
		}
		return a
	}
	match := bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}
	out := bson.D{{Key: "$out", Value: "copy"}}
	merge := bson.D{{Key: "$merge", Value: bson.D{{Key: "into", Value: "copy"}}}}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		want string // "" read-only; else a part of why not
	}{
		{"serverStatus", bson.D{{Key: "serverStatus", Value: 1}}, ""},
		{"getParameter", bson.D{{Key: "getParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}, ""},
		{"find", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 1}}}}, ""},
		{"isMaster alias", bson.D{{Key: "ismaster", Value: 1}}, ""},
		{"getMore", bson.D{{Key: "getMore", Value: int64(12)}, {Key: "collection", Value: "c"}}, ""},
		{"aggregate reads", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(match)}}, ""},
		{"aggregate $out", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(match, out)}}, "a $out stage"},
		{"aggregate $merge", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(merge)}}, "a $merge stage"},
		{"$out in $facet", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(
			bson.D{{Key: "$facet", Value: bson.D{{Key: "x", Value: pipeline(match, out)}}}})}}, "a $out stage"},
		{"$merge in $lookup", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "d"}, {Key: "as", Value: "j"}, {Key: "pipeline", Value: pipeline(merge)}}}})}}, "a $merge stage"},
		{"$out in $unionWith", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(
			bson.D{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "d"}, {Key: "pipeline", Value: pipeline(out)}}}})}}, "a $out stage"},
		{"explain find", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, {Key: "verbosity", Value: "executionStats"}}, ""},
		{"explain update", bson.D{{Key: "explain", Value: bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{}}}}}, ""},
		{"explain aggregate $out", bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline(out)}}}}, "$out"},
		{"explain of a DDL", bson.D{{Key: "explain", Value: bson.D{{Key: "createIndexes", Value: "c"}}}}, "explain may wrap only"},
		{"explain of nothing", bson.D{{Key: "explain", Value: "find"}}, "explain wraps no command document"},
		{"profile -1", bson.D{{Key: "profile", Value: int32(-1)}}, ""},
		{"profile 2", bson.D{{Key: "profile", Value: int32(2)}}, "changes the profiler"},
		{"profile 0", bson.D{{Key: "profile", Value: 0.0}}, "changes the profiler"},
		{"profile -1 with slowms", bson.D{{Key: "profile", Value: int32(-1)}, {Key: "slowms", Value: int32(1)}}, "changes the profiler"},
		{"profile '-1'", bson.D{{Key: "profile", Value: "-1"}}, "changes the profiler"},
		{"setParameter", bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 3600}}, "not one of the commands that only read"},
		{"setParameter in other case", bson.D{{Key: "SetParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 3600}}, "not one of"},
		{"serverStatus in other case", bson.D{{Key: "SERVERSTATUS", Value: 1}}, "not one of"},
		{"createIndexes", bson.D{{Key: "createIndexes", Value: "c"}}, "not one of"},
		{"shutdown", bson.D{{Key: "shutdown", Value: 1}}, "not one of"},
		{"dropDatabase", bson.D{{Key: "dropDatabase", Value: 1}}, "not one of"},
		{"replSetInitiate", bson.D{{Key: "replSetInitiate", Value: bson.D{}}}, "not one of"},
		{"setFreeMonitoring", bson.D{{Key: "setFreeMonitoring", Value: 1}, {Key: "action", Value: "enable"}}, "not one of"},
		{"empty", bson.D{}, "names no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Writes(tc.cmd)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Writes(%v) = %q, want %q", tc.cmd, got, tc.want)
			}
		})
	}
}
