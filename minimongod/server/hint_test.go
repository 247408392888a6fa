package server

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// hintArg reads a find's hint as mongod does: an index name or key
// pattern, {$natural: ±1}, nothing for "" or {}; one that names no index
// of the collection is BadValue, one of another type FailedToParse. The
// hinted plan scans that index (over the filter's bounds on its leading
// field when there are some) whatever planQuery would have chosen.
func TestHintChoosesThePlan(t *testing.T) {
	_, coll := openFixture(t)
	type q = bson.D
	cases := []struct {
		name         string
		hint         any // nil: the command has no hint field
		filter, sort bson.D
		wantCode     int32  // 0: accepted
		wantSummary  string // "" with no hint: planQuery plans
		wantDesc     bool
		wantSorted   bool
		wantBounded  bool // the scan's ranges come from a predicate
	}{
		{"no hint field", nil, q{{Key: "a", Value: 3}}, nil, 0, "", false, true, false},
		{"empty name", "", q{{Key: "a", Value: 3}}, nil, 0, "", false, true, false},
		{"empty pattern", q{}, q{{Key: "a", Value: 3}}, nil, 0, "", false, true, false},
		{"index name over a predicate on another field", "b_1", q{{Key: "a", Value: 3}}, nil, 0, "IXSCAN { b: 1 }", false, true, false},
		{"index name over its own field", "a_1", q{{Key: "a", Value: 3}, {Key: "b", Value: 3}}, nil, 0, "IXSCAN { a: 1 }", false, true, true},
		{"key pattern", q{{Key: "b", Value: 1}}, q{{Key: "b", Value: q{{Key: "$lt", Value: 5}}}}, nil, 0, "IXSCAN { b: 1 }", false, true, true},
		{"compound key pattern", q{{Key: "c", Value: 1}, {Key: "b", Value: 1}}, nil, nil, 0, "IXSCAN { c: 1, b: 1 }", false, true, false},
		{"key pattern in another order", q{{Key: "b", Value: 1}, {Key: "c", Value: 1}}, nil, nil, mongoerr.CodeBadValue, "", false, false, false},
		{"key pattern with another direction", q{{Key: "a", Value: -1}}, nil, nil, mongoerr.CodeBadValue, "", false, false, false},
		{"_id_ by name", "_id_", q{{Key: "a", Value: 3}}, nil, 0, "IXSCAN { _id: 1 }", false, true, false},
		{"_id by pattern, sorted descending", q{{Key: "_id", Value: 1}}, nil, q{{Key: "_id", Value: -1}}, 0, "IXSCAN { _id: 1 }", true, true, false},
		{"$natural forward over an indexed equality", q{{Key: "$natural", Value: 1}}, q{{Key: "a", Value: 3}}, nil, 0, "COLLSCAN", false, true, false},
		{"$natural backward", q{{Key: "$natural", Value: -1}}, nil, nil, 0, "COLLSCAN", true, true, false},
		{"$natural with a sort", q{{Key: "$natural", Value: 1}}, nil, q{{Key: "b", Value: 1}}, 0, "COLLSCAN", false, false, false},
		{"index by name in sort order", "b_1", nil, q{{Key: "b", Value: -1}}, 0, "IXSCAN { b: 1 }", true, true, false},
		{"index by name against the sort", "a_1", nil, q{{Key: "b", Value: 1}}, 0, "IXSCAN { a: 1 }", false, false, false},
		{"compound index cannot give a sort on its leading field", "c_1_b_1", nil, q{{Key: "c", Value: 1}}, 0, "IXSCAN { c: 1, b: 1 }", false, false, false},
		{"unknown name", "nope_1", nil, nil, mongoerr.CodeBadValue, "", false, false, false},
		{"pattern of no index", q{{Key: "s", Value: 1}}, nil, nil, mongoerr.CodeBadValue, "", false, false, false},
		{"a number", 1, nil, nil, mongoerr.CodeFailedToParse, "", false, false, false},
		{"an array", bson.A{"a_1"}, nil, nil, mongoerr.CodeFailedToParse, "", false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := bson.D{{Key: "find", Value: "c"}}
			if tc.hint != nil {
				cmd = append(cmd, bson.E{Key: "hint", Value: tc.hint})
			}
			body := marshalDoc(t, cmd)
			h, err := hintArg(&request{db: "test", name: "find", body: bsoncore.Document(body)}, coll)
			if tc.wantCode != 0 {
				me, ok := err.(*mongoerr.Error)
				if !ok || me.Code != tc.wantCode {
					t.Fatalf("hintArg(%v) = %v, %v; want error code %d", tc.hint, h, err, tc.wantCode)
				}
				if tc.wantCode == mongoerr.CodeBadValue && me.Msg != "hint provided does not correspond to an existing index" {
					t.Errorf("message %q", me.Msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("hintArg(%v): %v", tc.hint, err)
			}
			if (h == nil) != (tc.wantSummary == "") {
				t.Fatalf("hintArg(%v) = %+v, want a hint: %v", tc.hint, h, tc.wantSummary != "")
			}
			if h == nil {
				return
			}
			m, srt := compile(t, tc.filter, tc.sort)
			p := planHinted(coll, h, m, srt)
			if got := p.summary(); got != tc.wantSummary {
				t.Errorf("hinted plan %s, want %s", got, tc.wantSummary)
			}
			if p.desc != tc.wantDesc || p.sorted != tc.wantSorted || (p.pred != nil) != tc.wantBounded {
				t.Errorf("desc %v sorted %v bounded %v; want %v %v %v", p.desc, p.sorted, p.pred != nil, tc.wantDesc, tc.wantSorted, tc.wantBounded)
			}
		})
	}
}
