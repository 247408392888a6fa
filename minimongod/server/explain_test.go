package server

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
)

// stageChain lists the stage names from the top of a plan tree down its
// inputStage links, and returns the leaf stage too.
func stageChain(t *testing.T, plan bson.Raw) ([]string, bson.Raw) {
	t.Helper()
	var names []string
	for {
		names = append(names, lookupPath(t, plan, "stage").StringValue())
		in, err := plan.LookupErr("inputStage")
		if err != nil {
			return names, plan
		}
		plan = in.Document()
	}
}

// stageNamed returns the stage called name in a plan chain.
func stageNamed(t *testing.T, plan bson.Raw, name string) bson.Raw {
	t.Helper()
	for {
		if lookupPath(t, plan, "stage").StringValue() == name {
			return plan
		}
		in, err := plan.LookupErr("inputStage")
		if err != nil {
			t.Fatalf("no %s stage in %v", name, plan)
		}
		plan = in.Document()
	}
}

// bounds reads an IXSCAN's indexBounds for field.
func bounds(t *testing.T, ixscan bson.Raw, field string) []string {
	t.Helper()
	vals, _ := lookupPath(t, ixscan, "indexBounds."+field).Array().Values()
	var out []string
	for _, v := range vals {
		out = append(out, v.StringValue())
	}
	return out
}

// explain shows the plan the executor runs (the stages from the top,
// index, bounds in scan order and direction) and, with executionStats,
// the counts of running it on test.c: nReturned, keys and documents
// examined, in total and per stage.
func TestExplainOutput(t *testing.T) {
	tc, _ := openFixture(t)
	type q = bson.D
	find := func(rest ...bson.E) bson.D { return append(bson.D{{Key: "find", Value: "c"}}, rest...) }
	cases := []struct {
		name       string
		cmd        bson.D
		summary    string
		stages     []string
		index      string   // IXSCAN's indexName; "" without one
		field      string   // the IXSCAN field whose bounds are checked
		bounds     []string // its indexBounds
		direction  string   // the leaf's direction; "" for IDHACK
		n, keys    int64    // executionStats nReturned, totalKeysExamined
		docs       int64    // totalDocsExamined
		wantFilter bool     // the FETCH or COLLSCAN shows a filter
	}{
		{"index equality", find(bson.E{Key: "filter", Value: q{{Key: "a", Value: 3}}}),
			"IXSCAN { a: 1 }", []string{"FETCH", "IXSCAN"}, "a_1", "a", []string{"[3, 3]"}, "forward", 20, 20, 20, false},
		{"index equality with a residual filter", find(bson.E{Key: "filter", Value: q{{Key: "a", Value: 3}, {Key: "c", Value: 3}}}),
			"IXSCAN { a: 1 }", []string{"FETCH", "IXSCAN"}, "a_1", "a", []string{"[3, 3]"}, "forward", 3, 20, 20, true},
		{"$in sorted in memory with skip and limit", find(bson.E{Key: "filter", Value: q{{Key: "a", Value: q{{Key: "$in", Value: bson.A{2, 1}}}}}},
			bson.E{Key: "sort", Value: q{{Key: "s", Value: -1}}}, bson.E{Key: "skip", Value: 3}, bson.E{Key: "limit", Value: 10}),
			"IXSCAN { a: 1 }", []string{"LIMIT", "SKIP", "SORT", "FETCH", "IXSCAN"}, "a_1", "a", []string{"[1, 1]", "[2, 2]"}, "forward", 10, 40, 40, false},
		{"range backward in sort order", find(bson.E{Key: "filter", Value: q{{Key: "b", Value: q{{Key: "$gte", Value: 190}}}}},
			bson.E{Key: "sort", Value: q{{Key: "b", Value: -1}}}),
			"IXSCAN { b: 1 }", []string{"FETCH", "IXSCAN"}, "b_1", "b", []string{"[inf.0, 190]"}, "backward", 10, 10, 10, false},
		{"two-sided range", find(bson.E{Key: "filter", Value: q{{Key: "b", Value: q{{Key: "$gt", Value: 10}, {Key: "$lte", Value: 15}}}}}),
			"IXSCAN { b: 1 }", []string{"FETCH", "IXSCAN"}, "b_1", "b", []string{"(10, 15]"}, "forward", 5, 5, 5, false},
		{"whole index backward for a sort", find(bson.E{Key: "sort", Value: q{{Key: "b", Value: -1}}}, bson.E{Key: "limit", Value: 4}),
			"IXSCAN { b: 1 }", []string{"LIMIT", "FETCH", "IXSCAN"}, "b_1", "b", []string{"[MaxKey, MinKey]"}, "backward", 4, 4, 4, false},
		{"compound index on its leading field", find(bson.E{Key: "filter", Value: q{{Key: "c", Value: 3}}}),
			"IXSCAN { c: 1, b: 1 }", []string{"FETCH", "IXSCAN"}, "c_1_b_1", "b", []string{"[MinKey, MaxKey]"}, "forward", 29, 29, 29, false},
		{"multikey index equality", find(bson.E{Key: "filter", Value: q{{Key: "tags", Value: 12}}}),
			"IXSCAN { tags: 1 }", []string{"FETCH", "IXSCAN"}, "tags_1", "tags", []string{"[12, 12]"}, "forward", 50, 50, 50, false},
		{"multikey range bounded on one side only", find(bson.E{Key: "filter", Value: q{{Key: "tags", Value: q{{Key: "$gte", Value: 2}, {Key: "$lte", Value: 3}}}}}),
			"IXSCAN { tags: 1 }", []string{"FETCH", "IXSCAN"}, "tags_1", "tags", []string{"[2, MaxKey]"}, "forward", 200, 300, -1, false},
		{"collection scan sorted in memory", find(bson.E{Key: "filter", Value: q{{Key: "s", Value: q{{Key: "$gte", Value: "s150"}}}}},
			bson.E{Key: "sort", Value: q{{Key: "s", Value: 1}}}, bson.E{Key: "limit", Value: 5}),
			"COLLSCAN", []string{"LIMIT", "SORT", "COLLSCAN"}, "", "", nil, "forward", 5, 0, 200, true},
		{"$natural backward", find(bson.E{Key: "hint", Value: q{{Key: "$natural", Value: -1}}}, bson.E{Key: "filter", Value: q{{Key: "a", Value: 3}}}),
			"COLLSCAN", []string{"COLLSCAN"}, "", "", nil, "backward", 20, 0, 200, true},
		{"hinted index over another field's equality", find(bson.E{Key: "hint", Value: "b_1"}, bson.E{Key: "filter", Value: q{{Key: "a", Value: 3}}}),
			"IXSCAN { b: 1 }", []string{"FETCH", "IXSCAN"}, "b_1", "b", []string{"[MinKey, MaxKey]"}, "forward", 20, 200, 200, true},
		{"_id point", find(bson.E{Key: "filter", Value: q{{Key: "_id", Value: 7}}}),
			"IDHACK", []string{"IDHACK"}, "", "", nil, "", 1, 1, 1, false},
		{"_id point not there", find(bson.E{Key: "filter", Value: q{{Key: "_id", Value: 1000}}}),
			"IDHACK", []string{"IDHACK"}, "", "", nil, "", 0, 0, 0, false},
		{"_id range", find(bson.E{Key: "filter", Value: q{{Key: "_id", Value: q{{Key: "$lt", Value: 3}}}}}),
			"IXSCAN { _id: 1 }", []string{"FETCH", "IXSCAN"}, "_id_", "_id", []string{"[-inf.0, 3)"}, "forward", 3, 3, 3, false},
		{"count", bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: q{{Key: "a", Value: 5}}}},
			"IXSCAN { a: 1 }", []string{"COUNT", "FETCH", "IXSCAN"}, "a_1", "a", []string{"[5, 5]"}, "forward", 20, 20, 20, false},
		{"delete one", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{q{{Key: "q", Value: q{{Key: "c", Value: 4}}}, {Key: "limit", Value: 1}}}}},
			"IXSCAN { c: 1, b: 1 }", []string{"DELETE", "LIMIT", "FETCH", "IXSCAN"}, "c_1_b_1", "c", []string{"[4, 4]"}, "forward", 1, 1, 1, false},
		{"missing collection", bson.D{{Key: "find", Value: "nothere"}, {Key: "filter", Value: q{{Key: "a", Value: 1}}}},
			"EOF", []string{"EOF"}, "", "", nil, "", 0, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := tc.must("test", bson.D{{Key: "explain", Value: c.cmd}, {Key: "verbosity", Value: "executionStats"}})
			if got := lookupPath(t, ex, "queryPlanner.planSummary").StringValue(); got != c.summary {
				t.Errorf("planSummary %q, want %q", got, c.summary)
			}
			for _, key := range []string{"queryPlanner.winningPlan", "executionStats.executionStages"} {
				names, leaf := stageChain(t, lookupPath(t, ex, key).Document())
				if !slices.Equal(names, c.stages) {
					t.Errorf("%s stages %v, want %v", key, names, c.stages)
				}
				if got, _ := leaf.Lookup("direction").StringValueOK(); got != c.direction {
					t.Errorf("%s leaf direction %q, want %q", key, got, c.direction)
				}
				if c.index == "" {
					continue
				}
				ix := stageNamed(t, leaf, "IXSCAN")
				if got := lookupPath(t, ix, "indexName").StringValue(); got != c.index {
					t.Errorf("%s indexName %q, want %q", key, got, c.index)
				}
				if got := bounds(t, ix, c.field); !slices.Equal(got, c.bounds) {
					t.Errorf("%s indexBounds.%s %q, want %q", key, c.field, got, c.bounds)
				}
			}
			winning := lookupPath(t, ex, "queryPlanner.winningPlan").Document()
			_, leaf := stageChain(t, winning)
			top := leaf
			if c.index != "" {
				top = stageNamed(t, winning, "FETCH")
			}
			if _, err := top.LookupErr("filter"); (err == nil) != c.wantFilter {
				t.Errorf("%s shows a filter: %v, want %v", lookupPath(t, top, "stage").StringValue(), err == nil, c.wantFilter)
			}
			checkExecutionStats(t, ex, c.index != "", c.n, c.keys, c.docs)
		})
	}
}

// checkExecutionStats checks the totals and that the leaf stages report
// the same keys and documents examined (docs < 0: not checked).
func checkExecutionStats(t *testing.T, ex bson.Raw, indexed bool, n, keys, docs int64) {
	t.Helper()
	if got := intAt(t, ex, "executionStats.nReturned"); got != n {
		t.Errorf("nReturned %d, want %d", got, n)
	}
	if got := intAt(t, ex, "executionStats.totalKeysExamined"); got != keys {
		t.Errorf("totalKeysExamined %d, want %d", got, keys)
	}
	if got := intAt(t, ex, "executionStats.totalDocsExamined"); docs >= 0 && got != docs {
		t.Errorf("totalDocsExamined %d, want %d", got, docs)
	}
	stages := lookupPath(t, ex, "executionStats.executionStages").Document()
	_, leaf := stageChain(t, stages)
	switch leafName := lookupPath(t, leaf, "stage").StringValue(); {
	case indexed:
		if got := intAt(t, leaf, "keysExamined"); got != keys {
			t.Errorf("IXSCAN keysExamined %d, want %d", got, keys)
		}
		if got := intAt(t, stageNamed(t, stages, "FETCH"), "docsExamined"); docs >= 0 && got != docs {
			t.Errorf("FETCH docsExamined %d, want %d", got, docs)
		}
	case leafName == "COLLSCAN" || leafName == "IDHACK":
		if got := intAt(t, leaf, "docsExamined"); got != docs {
			t.Errorf("%s docsExamined %d, want %d", leafName, got, docs)
		}
	}
}

// queryPlanner verbosity plans without running: no executionStats; a bad
// verbosity or an unknown command to explain is refused.
func TestExplainVerbosityAndRefusals(t *testing.T) {
	tc, _ := openFixture(t)
	findA := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}
	ex := tc.must("test", bson.D{{Key: "explain", Value: findA}, {Key: "verbosity", Value: "queryPlanner"}})
	if _, err := ex.LookupErr("executionStats"); err == nil {
		t.Errorf("queryPlanner verbosity has executionStats: %v", ex)
	}
	if got := lookupPath(t, ex, "queryPlanner.namespace").StringValue(); got != "test.c" {
		t.Errorf("namespace %q", got)
	}
	ex = tc.must("test", bson.D{{Key: "explain", Value: findA}})
	if _, err := ex.LookupErr("executionStats", "allPlansExecution"); err != nil {
		t.Errorf("default verbosity lacks executionStats.allPlansExecution: %v", ex)
	}
	for _, c := range []struct {
		name string
		cmd  bson.D
		code int32
	}{
		{"bad verbosity", bson.D{{Key: "explain", Value: findA}, {Key: "verbosity", Value: "everything"}}, mongoerr.CodeFailedToParse},
		{"not a document", bson.D{{Key: "explain", Value: "find"}}, mongoerr.CodeFailedToParse},
		{"unknown command", bson.D{{Key: "explain", Value: bson.D{{Key: "frobnicate", Value: "c"}}}}, mongoerr.CodeCommandNotFound},
		{"bad hint", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: "nope"}}}}, mongoerr.CodeBadValue},
	} {
		if code, msg := tc.fails("test", c.cmd); code != c.code {
			t.Errorf("%s: code %d (%s), want %d", c.name, code, msg, c.code)
		}
	}
}
