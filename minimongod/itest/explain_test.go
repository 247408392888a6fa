package itest

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// explain shows the plan the executor really uses and the keys and
// documents it examined, counted while running it.
func TestExplain(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.db("test").Collection("c")
	docs := make([]any, 1000)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 10}, {Key: "b", Value: i}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongoIndex("a")); err != nil {
		t.Fatal(err)
	}
	explain := func(cmd bson.D, verbosity string) bson.M {
		t.Helper()
		return s.run(t, "test", bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: verbosity}})
	}
	// An index equality: FETCH over IXSCAN, 100 keys and documents.
	ex := explain(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 3}}}}, "executionStats")
	wp := field(ex, "queryPlanner.winningPlan").(bson.M)
	ix := wp["inputStage"].(bson.M)
	if wp["stage"] != "FETCH" || ix["stage"] != "IXSCAN" || ix["indexName"] != "a_1" || ix["direction"] != "forward" {
		t.Errorf("winningPlan = %v", wp)
	}
	if b := field(ix, "indexBounds.a").(bson.A); len(b) != 1 || b[0] != "[3, 3]" {
		t.Errorf("indexBounds = %v", ix["indexBounds"])
	}
	if num(ex, "executionStats.nReturned") != 100 || num(ex, "executionStats.totalKeysExamined") != 100 ||
		num(ex, "executionStats.totalDocsExamined") != 100 {
		t.Errorf("executionStats = %v", ex["executionStats"])
	}
	if _, ok := ex["serverInfo"]; !ok {
		t.Error("no serverInfo")
	}
	// A collection scan with a blocking sort, skip and limit.
	ex = explain(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 900}}}}},
		{Key: "sort", Value: bson.D{{Key: "b", Value: -1}}}, {Key: "skip", Value: 5}, {Key: "limit", Value: 10}}, "allPlansExecution")
	stages := []string{}
	for st := field(ex, "executionStats.executionStages").(bson.M); st != nil; {
		stages = append(stages, st["stage"].(string))
		next, _ := st["inputStage"].(bson.M)
		st = next
	}
	if got := fmtStages(stages); got != "LIMIT SKIP SORT COLLSCAN" {
		t.Errorf("stages = %s", got)
	}
	if num(ex, "executionStats.nReturned") != 10 || num(ex, "executionStats.totalDocsExamined") != 1000 || num(ex, "executionStats.totalKeysExamined") != 0 {
		t.Errorf("executionStats = %v", ex["executionStats"])
	}
	if field(ex, "queryPlanner.planSummary") != "COLLSCAN" {
		t.Errorf("planSummary = %v", field(ex, "queryPlanner.planSummary"))
	}
	// _id point lookup; count; update (which writes nothing); aggregate.
	ex = explain(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 7}}}}, "executionStats")
	if field(ex, "queryPlanner.winningPlan.stage") != "IDHACK" || num(ex, "executionStats.totalKeysExamined") != 1 {
		t.Errorf("_id explain = %v", ex)
	}
	ex = explain(bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: 1}}}}, "queryPlanner")
	if field(ex, "queryPlanner.winningPlan.stage") != "COUNT" || field(ex, "queryPlanner.winningPlan.inputStage.stage") != "FETCH" {
		t.Errorf("count explain = %v", ex["queryPlanner"])
	}
	ex = explain(bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 2}}},
		{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}}}}}, "executionStats")
	if field(ex, "queryPlanner.winningPlan.stage") != "UPDATE" || num(ex, "executionStats.totalDocsExamined") != 100 {
		t.Errorf("update explain = %v", ex)
	}
	if n := must(c.CountDocuments(ctx, bson.D{{Key: "x", Value: 1}}))(t); n != 0 {
		t.Errorf("explain of an update wrote %d documents", n)
	}
	ex = explain(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 4}}}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}}}}}}, {Key: "cursor", Value: bson.D{}}}, "executionStats")
	st0 := field(ex, "stages").(bson.A)[0].(bson.M)["$cursor"].(bson.M)
	if field(st0, "queryPlanner.winningPlan.inputStage.indexName") != "a_1" || num(st0, "executionStats.nReturned") != 100 {
		t.Errorf("aggregate explain = %v", ex)
	}
	if ce := s.runErr(t, "test", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, {Key: "verbosity", Value: "x"}}); ce.Code != 9 {
		t.Errorf("bad verbosity: %v", ce)
	}
	// From pymongo.
	out := runPymongo(t, s, "e = db.c.find({'a': 5}).explain()\nprint(e['queryPlanner']['winningPlan']['inputStage']['indexName'], e['executionStats']['totalKeysExamined'])\n")
	if out != "a_1 100" {
		t.Errorf("pymongo explain: %q", out)
	}
}

func fmtStages(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
