package query

import (
	"reflect"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		filter, doc string
		want        bool
	}{
		// implicit equality and types
		{`{}`, `{"a": 1}`, true},
		{`{"a": 5}`, `{"a": 5}`, true},
		{`{"a": 5}`, `{"a": 5.0}`, true},
		{`{"a": 5}`, `{"a": {"$numberLong": "5"}}`, true},
		{`{"a": 5}`, `{"a": "5"}`, false},
		{`{"a": 5}`, `{"b": 5}`, false},
		{`{"a": 5, "b": 6}`, `{"a": 5, "b": 6}`, true},
		{`{"a": 5, "b": 6}`, `{"a": 5, "b": 7}`, false},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1}}`, true},
		{`{"a": {"b": 1}}`, `{"a": {"b": 1, "c": 2}}`, false},
		{`{"a": {"b": 1, "c": 2}}`, `{"a": {"c": 2, "b": 1}}`, false},
		// arrays
		{`{"a": 2}`, `{"a": [1, 2, 3]}`, true},
		{`{"a": 4}`, `{"a": [1, 2, 3]}`, false},
		{`{"a": [1, 2]}`, `{"a": [1, 2]}`, true},
		{`{"a": [1, 2]}`, `{"a": [[1, 2], 3]}`, true},
		{`{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{`{"a": 1}`, `{"a": [[1]]}`, false},
		{`{"a": []}`, `{"a": []}`, true},
		// dotted paths
		{`{"a.b": 1}`, `{"a": {"b": 1}}`, true},
		{`{"a.b.c": 1}`, `{"a": {"b": {"c": 1}}}`, true},
		{`{"a.b": 1}`, `{"a": [{"b": 2}, {"b": 1}]}`, true},
		{`{"a.b": 1}`, `{"a": [{"b": [0, 1]}]}`, true},
		{`{"a.b": 3}`, `{"a": [{"b": 2}, {"b": 1}]}`, false},
		{`{"a.1": 5}`, `{"a": [4, 5]}`, true},
		{`{"a.0": 5}`, `{"a": [4, 5]}`, false},
		{`{"a.1.b": 5}`, `{"a": [{"b": 4}, {"b": 5}]}`, true},
		{`{"a.0": 5}`, `{"a": [{"0": 5}]}`, true},
		{`{"a.b": 1}`, `{"a": 1}`, false},
		{`{"a.b.c": 1}`, `{"a": [{"b": [{"c": 1}]}]}`, true},
		// null and missing
		{`{"a": null}`, `{}`, true},
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": null}`, `{"a": 0}`, false},
		{`{"a": null}`, `{"a": [1, null]}`, true},
		{`{"a.b": null}`, `{"a": 5}`, true},
		{`{"a.b": null}`, `{"a": [{"c": 1}]}`, true},
		{`{"a.b": null}`, `{"a": [{"b": 1}]}`, false},
		{`{"a": {"$gte": null}}`, `{}`, true},
		{`{"a": {"$gt": null}}`, `{}`, false},
		// comparisons and type brackets
		{`{"a": {"$gt": 5}}`, `{"a": 6}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": 5}`, false},
		{`{"a": {"$gte": 5}}`, `{"a": 5.0}`, true},
		{`{"a": {"$lt": 5}}`, `{"a": 4.5}`, true},
		{`{"a": {"$lte": 5}}`, `{"a": 6}`, false},
		{`{"a": {"$gt": 5}}`, `{"a": "6"}`, false},
		{`{"a": {"$lt": 5}}`, `{"a": null}`, false},
		{`{"a": {"$lt": 5}}`, `{}`, false},
		{`{"a": {"$gt": "a"}}`, `{"a": "b"}`, true},
		{`{"a": {"$gt": "a"}}`, `{"a": 1}`, false},
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": 3}`, true},
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": 7}`, false},
		{`{"a": {"$gt": 1, "$lt": 5}}`, `{"a": [0, 7]}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": [1, 6]}`, true},
		{`{"a": {"$gt": 5}}`, `{"a": [1, 2]}`, false},
		{`{"a": {"$gt": {"$minKey": 1}}}`, `{"a": "x"}`, true},
		{`{"a": {"$lt": {"$maxKey": 1}}}`, `{"a": {"x": 1}}`, true},
		{`{"a": {"$gt": {"$numberDouble": "NaN"}}}`, `{"a": 1}`, false},
		{`{"a": {"$gte": {"$numberDouble": "NaN"}}}`, `{"a": {"$numberDouble": "NaN"}}`, true},
		{`{"a": {"$lt": 1}}`, `{"a": {"$numberDouble": "NaN"}}`, false},
		{`{"a": {"$gt": {"$date": "2020-01-01T00:00:00Z"}}}`, `{"a": {"$date": "2021-01-01T00:00:00Z"}}`, true},
		{`{"a": {"$gt": [1]}}`, `{"a": [2]}`, true},
		{`{"a": {"$eq": [1, 2]}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$eq": 2}}`, `{"a": [1, 2]}`, true},
		// $ne / $nin / $in
		{`{"a": {"$ne": 5}}`, `{"a": 6}`, true},
		{`{"a": {"$ne": 5}}`, `{"a": 5}`, false},
		{`{"a": {"$ne": 5}}`, `{}`, true},
		{`{"a": {"$ne": 5}}`, `{"a": [4, 5]}`, false},
		{`{"a": {"$ne": null}}`, `{}`, false},
		{`{"a": {"$ne": null}}`, `{"a": 1}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": 2}`, true},
		{`{"a": {"$in": [1, 2]}}`, `{"a": 3}`, false},
		{`{"a": {"$in": [1, 2]}}`, `{"a": [3, 2]}`, true},
		{`{"a": {"$in": []}}`, `{"a": 1}`, false},
		{`{"a": {"$in": [null]}}`, `{}`, true},
		{`{"a": {"$in": [null, 1]}}`, `{"a": 1}`, true},
		{`{"a": {"$in": [1]}}`, `{}`, false},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "^x", "options": ""}}]}}`, `{"a": "xy"}`, true},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": 3}`, true},
		{`{"a": {"$nin": [1, 2]}}`, `{"a": 1}`, false},
		{`{"a": {"$nin": [1, 2]}}`, `{}`, true},
		{`{"a": {"$nin": [null]}}`, `{}`, false},
		// $exists
		{`{"a": {"$exists": true}}`, `{"a": null}`, true},
		{`{"a": {"$exists": true}}`, `{}`, false},
		{`{"a": {"$exists": false}}`, `{}`, true},
		{`{"a": {"$exists": 0}}`, `{"a": 1}`, false},
		{`{"a.b": {"$exists": true}}`, `{"a": [{"c": 1}, {"b": 2}]}`, true},
		{`{"a.b": {"$exists": false}}`, `{"a": [{"c": 1}]}`, true},
		// $not
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": 3}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": 6}`, false},
		{`{"a": {"$not": {"$gt": 5}}}`, `{}`, true},
		{`{"a": {"$not": {"$gt": 5}}}`, `{"a": "x"}`, true},
		{`{"a": {"$not": {"$regularExpression": {"pattern": "^a", "options": ""}}}}`, `{"a": "ba"}`, true},
		// logical
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 2}`, true},
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"a": 1, "b": 3}`, false},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 2}`, true},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 0}`, false},
		{`{"$nor": [{"a": 1}, {"b": 2}]}`, `{"a": 0, "b": 0}`, true},
		{`{"$nor": [{"a": 1}, {"b": 2}]}`, `{"a": 1}`, false},
		{`{"$or": [{"a": 1}, {"$and": [{"b": 2}, {"c": 3}]}]}`, `{"b": 2, "c": 3}`, true},
		{`{"$comment": "hi", "a": 1}`, `{"a": 1}`, true},
		// regex, $size, $all, $elemMatch, $type, $mod
		{`{"a": {"$regularExpression": {"pattern": "^ab", "options": "i"}}}`, `{"a": "ABc"}`, true},
		{`{"a": {"$regex": "b$"}}`, `{"a": ["xa", "ab"]}`, true},
		{`{"a": {"$regex": "^B", "$options": "i"}}`, `{"a": "bob"}`, true},
		{`{"a": {"$regex": "^b"}}`, `{"a": 1}`, false},
		{`{"a": {"$size": 2}}`, `{"a": [1, 2]}`, true},
		{`{"a": {"$size": 2}}`, `{"a": [1]}`, false},
		{`{"a": {"$size": 0}}`, `{"a": 1}`, false},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3, 1]}`, true},
		{`{"a": {"$all": [1, 2]}}`, `{"a": [2, 3]}`, false},
		{`{"a": {"$all": []}}`, `{"a": [1]}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"a": [0, 5, 2]}`, true},
		{`{"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}}`, `{"a": [0, 5]}`, false},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1}, {"b": 1, "c": 2}]}`, true},
		{`{"a": {"$elemMatch": {"b": 1, "c": 2}}}`, `{"a": [{"b": 1}, {"c": 2}]}`, false},
		{`{"a": {"$elemMatch": {"b": 1}}}`, `{"a": {"b": 1}}`, false},
		{`{"a": {"$type": "string"}}`, `{"a": "x"}`, true},
		{`{"a": {"$type": "number"}}`, `{"a": 1.5}`, true},
		{`{"a": {"$type": 16}}`, `{"a": 1.5}`, false},
		{`{"a": {"$type": ["int", "string"]}}`, `{"a": [1.5, "x"]}`, true},
		{`{"a": {"$type": "array"}}`, `{"a": []}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9}`, true},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 10}`, false},
		{`{"a": {"$mod": [4, 1]}}`, `{"a": 9.9}`, true},
	}
	for _, tc := range tests {
		m, err := Compile(mj(t, tc.filter))
		if err != nil {
			t.Errorf("Compile(%s): %v", tc.filter, err)
			continue
		}
		if got := m.Match(mj(t, tc.doc)); got != tc.want {
			t.Errorf("Match(%s, %s) = %v, want %v", tc.filter, tc.doc, got, tc.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		filter string
		code   int32
		msg    string
	}{
		{`{"a": {"$foo": 1}}`, 2, "unknown operator: $foo"},
		{`{"$foo": 1}`, 2, "unknown top level operator: $foo"},
		{`{"$and": []}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$or": 1}`, 2, "$and/$or/$nor must be a nonempty array"},
		{`{"$nor": [1]}`, 2, "$or/$and/$nor entries need to be full objects"},
		{`{"a": {"$in": 1}}`, 2, "$in needs an array"},
		{`{"a": {"$nin": {}}}`, 2, "$nin needs an array"},
		{`{"a": {"$in": [{"$gt": 1}]}}`, 2, "cannot nest $ under $in"},
		{`{"a": {"$not": 1}}`, 2, "$not needs a regex or a document"},
		{`{"a": {"$not": {}}}`, 2, "$not cannot be empty"},
		{`{"a": {"$gt": 1, "b": 2}}`, 2, "unknown operator: b"},
		{`{"a": {"$options": "i"}}`, 2, "$options needs a $regex"},
		{`{"a": {"$regex": "("}}`, 51091, ""},
		// PCRE-only syntax, as the README lists it.
		{`{"a": {"$regex": "a(?=b)"}}`, 51091, "Regular expression is invalid: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{`{"a": {"$regex": "(a)\\1"}}`, 51091, "Regular expression is invalid: error parsing regexp: invalid escape sequence: `\\1`"},
		{`{"a": {"$in": [{"$regularExpression": {"pattern": "(?<!a)b", "options": ""}}]}}`, 51091, ""},
		{`{"a": {"$not": {"$regex": "(?>a)"}}}`, 51091, ""},
		{`{"a": {"$size": "x"}}`, 2, "$size needs a number"},
		{`{"a": {"$type": "nope"}}`, 2, "Unknown type name alias: nope"},
		{`{"a": {"$mod": [0, 1]}}`, 2, "divisor cannot be 0"},
		{`{"a": {"$elemMatch": 1}}`, 2, "$elemMatch needs an Object"},
		{`{"$where": "1"}`, 238, ""},
	}
	for _, tc := range tests {
		_, err := Compile(mj(t, tc.filter))
		code, msg := errInfo(err)
		if code != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("Compile(%s) = %d %q, want %d %q", tc.filter, code, msg, tc.code, tc.msg)
		}
	}
}

// TestCompileIDEqualityShortcut checks that Compile's shortcut for
// {_id: v} builds exactly what the general compiler builds, and that it
// leaves every other filter to the general compiler.
func TestCompileIDEqualityShortcut(t *testing.T) {
	for _, tc := range []struct {
		filter   string
		shortcut bool
	}{
		{`{"_id": 5}`, true},
		{`{"_id": "x"}`, true},
		{`{"_id": {"$oid": "5f0000000000000000000001"}}`, true},
		{`{"_id": {"$numberLong": "7"}}`, true},
		{`{"_id": 1.5}`, true},
		{`{"_id": null}`, false},
		{`{"_id": [1]}`, false},
		{`{"_id": {"a": 1}}`, false},
		{`{"_id": {"$eq": 5}}`, false},
		{`{"_id": {"$regularExpression": {"pattern": "a", "options": ""}}}`, false},
		{`{"_id": 5, "a": 1}`, false},
		{`{"a": 5}`, false},
	} {
		filter := mj(t, tc.filter)
		if _, ok := plainIDEquality(filter); ok != tc.shortcut {
			t.Errorf("plainIDEquality(%s) = %v, want %v", tc.filter, ok, tc.shortcut)
		}
		got, err := Compile(filter)
		if err != nil {
			t.Fatalf("Compile(%s): %v", tc.filter, err)
		}
		want, err := compileGeneral(&Matcher{}, filter)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Compile(%s) = %#v, the general compiler gives %#v", tc.filter, got, want)
		}
	}
}
