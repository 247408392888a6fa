// Package cmdpolicy decides what m:command may send to a server wtd did
// not start (mongod.connect, mongod.service): which commands only read
// (Writes gives "" for them, and how the others change a server), and
// which method makes a refused change in a way wtd puts back (InsteadOf).
// It holds no state and talks to no server; the engine applies it.
package cmdpolicy

import (
	"fmt"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// readOnlyCommands are the commands that only read, by the names mongod
// looks them up by: the first key of the command document, case-sensitive
// (the lower-case spellings are mongod's own aliases). A name not here is
// refused, whatever it does. aggregate, explain and profile are read-only
// only in some forms (see Writes).
var readOnlyCommands = map[string]bool{
	"aggregate":         true,
	"buildInfo":         true,
	"buildinfo":         true,
	"collStats":         true,
	"collstats":         true,
	"connectionStatus":  true,
	"count":             true,
	"currentOp":         true,
	"dataSize":          true,
	"datasize":          true,
	"dbStats":           true,
	"dbstats":           true,
	"distinct":          true,
	"explain":           true,
	"find":              true,
	"getCmdLineOpts":    true,
	"getDiagnosticData": true,
	"getLog":            true,
	"getMore":           true,
	"getParameter":      true,
	"hello":             true,
	"hostInfo":          true,
	"isMaster":          true,
	"ismaster":          true,
	"killCursors":       true,
	"listCollections":   true,
	"listCommands":      true,
	"listDatabases":     true,
	"listIndexes":       true,
	"lockInfo":          true,
	"ping":              true,
	"profile":           true,
	"replSetGetConfig":  true,
	"replSetGetStatus":  true,
	"serverStatus":      true,
	"top":               true,
	"whatsmyuri":        true,
}

// explainable are the commands explain may wrap on a server wtd did not
// start. mongod's explain plans the command and, with executionStats or
// allPlansExecution, runs the plan without applying its writes: an
// explained update, delete or findAndModify changes nothing.
var explainable = map[string]bool{
	"find": true, "count": true, "distinct": true, "aggregate": true,
	"update": true, "delete": true, "findAndModify": true, "findandmodify": true,
}

// writingStages are the aggregation stages that write a collection.
var writingStages = []string{"$out", "$merge"}

// Writes says how cmd may change the server it runs on, "" when it
// only reads: its name (the first key) must be one of readOnlyCommands;
// an aggregate (also one explain wraps) must have no $out or $merge stage
// anywhere, nested pipelines ($lookup, $facet, $unionWith) included;
// explain must wrap one of explainable; profile must be level -1 (read the
// settings) with nothing to set (slowms, sampleRate, filter).
func Writes(cmd bson.D) string {
	if len(cmd) == 0 {
		return "an empty command document names no command"
	}
	name := cmd[0].Key
	if !readOnlyCommands[name] {
		return fmt.Sprintf("%s is not one of the commands that only read", name)
	}
	switch name {
	case "aggregate":
		if stage := writingStage(cmd); stage != "" {
			return fmt.Sprintf("an aggregate with a %s stage writes a collection", stage)
		}
	case "explain":
		inner, ok := cmd[0].Value.(bson.D)
		if !ok || len(inner) == 0 {
			return "explain wraps no command document"
		}
		if !explainable[inner[0].Key] {
			return fmt.Sprintf("explain of %s: explain may wrap only %s", inner[0].Key, strings.Join(sortedNames(explainable), ", "))
		}
		if stage := writingStage(inner); stage != "" {
			return fmt.Sprintf("explain of an aggregate with a %s stage", stage)
		}
	case "profile":
		if !profileReads(cmd) {
			return fmt.Sprintf("profile %v changes the profiler (only { profile = -1 }, which reads its settings, leaves it as it is)", cmd[0].Value)
		}
	}
	return ""
}

// profileReads reports whether a profile command only reads the profiler's
// settings: level -1 as a number and nothing else to set.
func profileReads(cmd bson.D) bool {
	level, ok := wholeNumber(cmd[0].Value)
	if !ok || level != -1 {
		return false
	}
	for _, e := range cmd[1:] {
		if e.Key != "comment" {
			return false
		}
	}
	return true
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// writingStage returns the first key $out or $merge found at any depth of
// v, "" when there is none.
func writingStage(v any) string {
	switch x := v.(type) {
	case bson.D:
		for _, e := range x {
			for _, w := range writingStages {
				if e.Key == w {
					return w
				}
			}
			if s := writingStage(e.Value); s != "" {
				return s
			}
		}
	case bson.M:
		for k, e := range x {
			for _, w := range writingStages {
				if k == w {
					return w
				}
			}
			if s := writingStage(e); s != "" {
				return s
			}
		}
	case bson.A:
		for _, e := range x {
			if s := writingStage(e); s != "" {
				return s
			}
		}
	case []any:
		return writingStage(bson.A(x))
	case map[string]any:
		return writingStage(bson.M(x))
	}
	return ""
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// InsteadOf names the method that makes the change cmd makes in a way wtd
// puts back, "" when there is none.
func InsteadOf(cmd bson.D) string {
	switch cmd[0].Key {
	case "setParameter":
		for _, e := range cmd[1:] {
			if e.Key == "wiredTigerEngineRuntimeConfig" {
				return "use m:reconfigure(config), which works out the values before and sets them back at the end of the run"
			}
		}
		return "use m:set_parameter(name, value), which reads the value before and sets it back at the end of the run"
	case "createIndexes":
		return "use m:create_index{ ns = ..., key = ... }, which is recorded and dropped at the end of the run unless keep = true"
	}
	return ""
}

// ReadOnly lists the commands that only read, sorted.
func ReadOnly() []string { return sortedNames(readOnlyCommands) }

// Explainable lists the commands explain may wrap on a server wtd did not
// start, sorted.
func Explainable() []string { return sortedNames(explainable) }
