package query

import (
	"testing"
)

func TestPredicates(t *testing.T) {
	type want struct {
		path, eq, in, lo, hi string
		loIn, hiIn           bool
	}
	tests := []struct {
		filter string
		want   []want
	}{
		{`{"a": 5}`, []want{{path: "a", eq: "5"}}},
		{`{"a": {"$eq": "x"}, "b.c": {"b": 1}}`, []want{{path: "a", eq: `"x"`}, {path: "b.c", eq: `{"b": 1}`}}},
		{`{"a": null}`, nil},
		{`{"a": [1]}`, nil},
		{`{"a": {"$regularExpression": {"pattern": "x", "options": ""}}}`, nil},
		{`{"a": {"$in": [3, 1, 3]}}`, []want{{path: "a", in: "[1, 3]"}}},
		{`{"a": {"$in": [1, null]}}`, nil},
		{`{"a": {"$gt": 5}}`, []want{{path: "a", lo: "5", hi: `{"$numberDouble": "Infinity"}`, hiIn: true}}},
		{`{"a": {"$gt": 1, "$lte": 5}}`, []want{{path: "a", lo: "1", hi: "5", hiIn: true}}},
		{`{"a": {"$gte": 1, "$gt": 1}}`, []want{{path: "a", lo: "1", hi: `{"$numberDouble": "Infinity"}`, hiIn: true}}},
		{`{"a": {"$lt": "m"}}`, []want{{path: "a", lo: `""`, hi: "\"m\"", loIn: true}}},
		{`{"a": {"$gte": "m"}}`, []want{{path: "a", lo: "\"m\"", hi: "{}", loIn: true}}},
		{`{"a": {"$gt": 1}, "$and": [{"a": 3}, {"b": {"$in": [2]}}]}`, []want{{path: "a", eq: "3"}, {path: "b", in: "[2]"}}},
		{`{"$or": [{"a": 1}, {"b": 1}]}`, nil},
		{`{"a": {"$ne": 1}}`, nil},
		{`{"a": {"$gt": [1]}}`, nil},
	}
	for _, tc := range tests {
		m, err := Compile(mj(t, tc.filter))
		if err != nil {
			t.Fatalf("Compile(%s): %v", tc.filter, err)
		}
		got := m.Predicates()
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %d predicates %+v, want %d", tc.filter, len(got), got, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			p := got[i]
			ok := p.Path == w.path
			if w.eq != "" {
				ok = ok && p.Eq != nil && Compare(*p.Eq, mv(t, w.eq)) == 0 && sameValue(*p.Eq, mv(t, w.eq))
			}
			if w.in != "" {
				ok = ok && Compare(buildArray(p.In), mv(t, w.in)) == 0
			}
			if w.lo != "" {
				ok = ok && p.IsRange() && Compare(p.Lower, mv(t, w.lo)) == 0 && Compare(p.Upper, mv(t, w.hi)) == 0 &&
					p.LowerInclusive == w.loIn && p.UpperInclusive == w.hiIn
			}
			if !ok {
				t.Errorf("%s: predicate %d = %+v, want %+v", tc.filter, i, p, w)
			}
		}
	}
}

func TestIDEquality(t *testing.T) {
	tests := []struct {
		filter string
		want   string
	}{
		{`{"_id": 5}`, "5"},
		{`{"_id": {"$eq": "x"}}`, `"x"`},
		{`{"_id": {"$oid": "000000000000000000000001"}}`, `{"$oid": "000000000000000000000001"}`},
		{`{"_id": 5, "a": 1}`, ""},
		{`{"_id": {"$gt": 5}}`, ""},
		{`{"_id": {"$eq": 5, "$ne": 6}}`, ""},
		{`{"_id": {"a": 1}}`, ""},
		{`{"_id": [1]}`, ""},
		{`{"a": 5}`, ""},
		{`{}`, ""},
	}
	for _, tc := range tests {
		m, err := Compile(mj(t, tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := m.IDEquality()
		if ok != (tc.want != "") || ok && !sameValue(v, mv(t, tc.want)) {
			t.Errorf("IDEquality(%s) = %v, %v; want %s", tc.filter, v, ok, tc.want)
		}
	}
}
