package server

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// planQuery picks the access path mongod's planner would win with on
// test.c: an _id point lookup, an index with an equality or $in before
// one with a range, an index in sort order when no predicate has one, a
// collection scan otherwise; and it says whether the scan already yields
// the sort (no blocking SORT) and in which direction.
func TestPlanQueryChoosesAccessPath(t *testing.T) {
	_, coll := openFixture(t)
	type q = bson.D
	gte := func(v int) q { return q{{Key: "$gte", Value: v}} }
	cases := []struct {
		name         string
		filter, sort bson.D
		wantSummary  string
		wantIndex    string
		wantSorted   bool
		wantDesc     bool
		wantDedupe   bool
	}{
		{"no filter", nil, nil, "COLLSCAN", "", true, false, false},
		{"_id equality", q{{Key: "_id", Value: 5}}, nil, "IDHACK", "_id_", true, false, false},
		{"_id $eq", q{{Key: "_id", Value: q{{Key: "$eq", Value: 5}}}}, nil, "IDHACK", "_id_", true, false, false},
		{"_id with another field", q{{Key: "_id", Value: 5}, {Key: "a", Value: 5}}, nil, "IXSCAN { _id: 1 }", "_id_", true, false, false},
		{"_id range", q{{Key: "_id", Value: gte(150)}}, nil, "IXSCAN { _id: 1 }", "_id_", true, false, false},
		{"_id range sorted descending", q{{Key: "_id", Value: gte(150)}}, q{{Key: "_id", Value: -1}}, "IXSCAN { _id: 1 }", "_id_", true, true, false},
		{"_id range sorted by another field", q{{Key: "_id", Value: gte(150)}}, q{{Key: "s", Value: 1}}, "IXSCAN { _id: 1 }", "_id_", false, false, false},
		{"index equality", q{{Key: "a", Value: 3}}, nil, "IXSCAN { a: 1 }", "a_1", true, false, true},
		{"index $in", q{{Key: "a", Value: q{{Key: "$in", Value: bson.A{1, 2}}}}}, nil, "IXSCAN { a: 1 }", "a_1", true, false, true},
		{"equality wins over an earlier range", q{{Key: "b", Value: gte(10)}, {Key: "a", Value: 3}}, nil, "IXSCAN { a: 1 }", "a_1", true, false, true},
		{"equality inside $and", q{{Key: "$and", Value: bson.A{q{{Key: "s", Value: "x"}}, q{{Key: "b", Value: 7}}}}}, nil, "IXSCAN { b: 1 }", "b_1", true, false, true},
		{"range on an index", q{{Key: "b", Value: gte(190)}}, nil, "IXSCAN { b: 1 }", "b_1", true, false, true},
		{"compound index on its leading field", q{{Key: "c", Value: 3}}, nil, "IXSCAN { c: 1, b: 1 }", "c_1_b_1", true, false, true},
		{"multikey index", q{{Key: "tags", Value: 12}}, nil, "IXSCAN { tags: 1 }", "tags_1", true, false, true},
		{"unindexed equality", q{{Key: "s", Value: "s001"}}, nil, "COLLSCAN", "", true, false, false},
		{"$or is not planned on an index", q{{Key: "$or", Value: bson.A{q{{Key: "a", Value: 1}}, q{{Key: "b", Value: 2}}}}}, nil, "COLLSCAN", "", true, false, false},
		{"$ne is not an index bound", q{{Key: "a", Value: q{{Key: "$ne", Value: 1}}}}, nil, "COLLSCAN", "", true, false, false},
		{"sort by an index", nil, q{{Key: "b", Value: -1}}, "IXSCAN { b: 1 }", "b_1", true, true, true},
		{"sort by _id", nil, q{{Key: "_id", Value: -1}}, "IXSCAN { _id: 1 }", "_id_", true, true, false},
		{"sort by an unindexed field", nil, q{{Key: "s", Value: 1}}, "COLLSCAN", "", false, false, false},
		{"sort by a compound index's leading field", nil, q{{Key: "c", Value: 1}}, "COLLSCAN", "", false, false, false},
		{"sort by two fields", nil, q{{Key: "a", Value: 1}, {Key: "b", Value: -1}}, "COLLSCAN", "", false, false, false},
		{"equality on one index, sort by another", q{{Key: "a", Value: 3}}, q{{Key: "b", Value: 1}}, "IXSCAN { a: 1 }", "a_1", false, false, true},
		{"range and sort on the same index", q{{Key: "b", Value: gte(100)}}, q{{Key: "b", Value: -1}}, "IXSCAN { b: 1 }", "b_1", true, true, true},
		{"compound index range cannot give its sort", q{{Key: "c", Value: gte(5)}}, q{{Key: "c", Value: 1}}, "IXSCAN { c: 1, b: 1 }", "c_1_b_1", false, false, true},
		{"range on an index, sort on two fields", q{{Key: "c", Value: q{{Key: "$lte", Value: 1}}}}, q{{Key: "a", Value: 1}, {Key: "b", Value: -1}}, "IXSCAN { c: 1, b: 1 }", "c_1_b_1", false, false, true},
		{"_id range, sort on _id and another field", q{{Key: "_id", Value: gte(150)}}, q{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, "IXSCAN { _id: 1 }", "_id_", false, false, false},
		{"unindexed filter, sort by an index", q{{Key: "s", Value: "s001"}}, q{{Key: "b", Value: 1}}, "IXSCAN { b: 1 }", "b_1", true, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, srt := compile(t, tc.filter, tc.sort)
			p := planQuery(coll, m, srt)
			if got := p.summary(); got != tc.wantSummary {
				t.Errorf("plan %s, want %s", got, tc.wantSummary)
			}
			if p.index != tc.wantIndex || p.sorted != tc.wantSorted || p.desc != tc.wantDesc || p.dedupe != tc.wantDedupe {
				t.Errorf("index %q sorted %v desc %v dedupe %v; want %q %v %v %v",
					p.index, p.sorted, p.desc, p.dedupe, tc.wantIndex, tc.wantSorted, tc.wantDesc, tc.wantDedupe)
			}
			if (p.ix == nil) != (tc.wantIndex == "" || tc.wantIndex == "_id_") {
				t.Errorf("secondary index %v for a plan on %q", p.ix, tc.wantIndex)
			}
		})
	}
}
