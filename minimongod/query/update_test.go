package query

import (
	"testing"
)

func TestUpdateApply(t *testing.T) {
	tests := []struct {
		update, doc, want string
		changed           bool
	}{
		{`{"$set": {"a": 2}}`, `{"_id": 1, "a": 1, "b": 1}`, `{"_id": 1, "a": 2, "b": 1}`, true},
		{`{"$set": {"a": 1}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`, false},
		{`{"$set": {"z": 1, "c": 2}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1, "c": 2, "z": 1}`, true},
		{`{"$set": {"a.b.c": 1}}`, `{"_id": 1}`, `{"_id": 1, "a": {"b": {"c": 1}}}`, true},
		{`{"$set": {"a.b": 1}}`, `{"_id": 1, "a": {"x": 0}}`, `{"_id": 1, "a": {"x": 0, "b": 1}}`, true},
		{`{"$set": {"a.1": 9}}`, `{"_id": 1, "a": [1, 2]}`, `{"_id": 1, "a": [1, 9]}`, true},
		{`{"$set": {"a.3": 9}}`, `{"_id": 1, "a": [1]}`, `{"_id": 1, "a": [1, null, null, 9]}`, true},
		{`{"$set": {"a.0.b": 9}}`, `{"_id": 1, "a": [{"b": 1}]}`, `{"_id": 1, "a": [{"b": 9}]}`, true},
		{`{"$set": {"_id": 1}}`, `{"_id": 1}`, `{"_id": 1}`, false},
		{`{"$unset": {"a": ""}}`, `{"_id": 1, "a": 1, "b": 2}`, `{"_id": 1, "b": 2}`, true},
		{`{"$unset": {"x": 1, "a.b": 1}}`, `{"_id": 1, "a": {"b": 1, "c": 2}}`, `{"_id": 1, "a": {"c": 2}}`, true},
		{`{"$unset": {"x.y": 1}}`, `{"_id": 1}`, `{"_id": 1}`, false},
		{`{"$unset": {"a.1": 1}}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [1, null, 3]}`, true},
		{`{"$inc": {"a": 1}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 2}`, true},
		{`{"$inc": {"a": 1}}`, `{"_id": 1}`, `{"_id": 1, "a": 1}`, true},
		{`{"$inc": {"a": 1.5}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 2.5}`, true},
		{`{"$inc": {"a": 1}}`, `{"_id": 1, "a": 2147483647}`, `{"_id": 1, "a": {"$numberLong": "2147483648"}}`, true},
		{`{"$inc": {"a": {"$numberLong": "1"}}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": {"$numberLong": "2"}}`, true},
		{`{"$inc": {"a.b": 1}}`, `{"_id": 1, "a": {"b": 1.0}}`, `{"_id": 1, "a": {"b": 2.0}}`, true},
		{`{"$mul": {"a": 3}}`, `{"_id": 1, "a": 2}`, `{"_id": 1, "a": 6}`, true},
		{`{"$mul": {"a": 3}}`, `{"_id": 1}`, `{"_id": 1, "a": 0}`, true},
		{`{"$min": {"a": 3}}`, `{"_id": 1, "a": 5}`, `{"_id": 1, "a": 3}`, true},
		{`{"$min": {"a": 7}}`, `{"_id": 1, "a": 5}`, `{"_id": 1, "a": 5}`, false},
		{`{"$max": {"a": 7}}`, `{"_id": 1, "a": 5}`, `{"_id": 1, "a": 7}`, true},
		{`{"$max": {"a": "s"}}`, `{"_id": 1, "a": 5}`, `{"_id": 1, "a": "s"}`, true},
		{`{"$rename": {"a": "b"}}`, `{"_id": 1, "a": 1, "c": 2}`, `{"_id": 1, "c": 2, "b": 1}`, true},
		{`{"$rename": {"a": "x.y"}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "x": {"y": 1}}`, true},
		{`{"$rename": {"q": "x.y"}}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`, false},
		{`{"$setOnInsert": {"a": 1}}`, `{"_id": 1}`, `{"_id": 1}`, false},
		{`{"$push": {"a": 3}}`, `{"_id": 1, "a": [1]}`, `{"_id": 1, "a": [1, 3]}`, true},
		{`{"$push": {"a": {"$each": [3, 4], "$position": 0}}}`, `{"_id": 1, "a": [1]}`, `{"_id": 1, "a": [3, 4, 1]}`, true},
		{`{"$push": {"a": {"$each": [3, 4], "$slice": -2}}}`, `{"_id": 1, "a": [1]}`, `{"_id": 1, "a": [3, 4]}`, true},
		{`{"$push": {"a": 1}}`, `{"_id": 1}`, `{"_id": 1, "a": [1]}`, true},
		{`{"$addToSet": {"a": {"$each": [1, 2, 2]}}}`, `{"_id": 1, "a": [1]}`, `{"_id": 1, "a": [1, 2]}`, true},
		{`{"$pop": {"a": 1}}`, `{"_id": 1, "a": [1, 2]}`, `{"_id": 1, "a": [1]}`, true},
		{`{"$pop": {"a": -1}}`, `{"_id": 1, "a": [1, 2]}`, `{"_id": 1, "a": [2]}`, true},
		{`{"$pull": {"a": 2}}`, `{"_id": 1, "a": [1, 2, 2, 3]}`, `{"_id": 1, "a": [1, 3]}`, true},
		{`{"$pull": {"a": {"$gte": 2}}}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [1]}`, true},
		{`{"$pull": {"a": {"b": 1}}}`, `{"_id": 1, "a": [{"b": 1, "c": 1}, {"b": 2}]}`, `{"_id": 1, "a": [{"b": 2}]}`, true},
		{`{"$pullAll": {"a": [1, 3]}}`, `{"_id": 1, "a": [1, 2, 3]}`, `{"_id": 1, "a": [2]}`, true},
		{`{"$set": {"a": 1}, "$unset": {"b": 1}}`, `{"_id": 1, "b": 1}`, `{"_id": 1, "a": 1}`, true},
		// replacement
		{`{"x": 1}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "x": 1}`, true},
		{`{"x": 1, "_id": 1}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "x": 1}`, true},
		{`{}`, `{"_id": 1, "a": 1}`, `{"_id": 1}`, true},
		{`{"a": 1}`, `{"_id": 1, "a": 1}`, `{"_id": 1, "a": 1}`, false},
	}
	for _, tc := range tests {
		u, err := CompileUpdate(mj(t, tc.update))
		if err != nil {
			t.Errorf("CompileUpdate(%s): %v", tc.update, err)
			continue
		}
		out, changed, err := u.Apply(mj(t, tc.doc))
		if err != nil {
			t.Errorf("Apply(%s, %s): %v", tc.update, tc.doc, err)
			continue
		}
		if got, want := js(t, out), js(t, mj(t, tc.want)); got != want || changed != tc.changed {
			t.Errorf("Apply(%s, %s) = %s, %v; want %s, %v", tc.update, tc.doc, got, changed, want, tc.changed)
		}
	}
}

func TestUpdateCompileErrors(t *testing.T) {
	tests := []struct {
		update string
		code   int32
		msg    string
	}{
		{`{"$foo": {"a": 1}}`, 9, "Unknown modifier: $foo. Expected a valid update modifier or pipeline-style update specified as an array"},
		{`{"$set": {"a": 1}, "b": 2}`, 9, "Unknown modifier: b. Expected a valid update modifier or pipeline-style update specified as an array"},
		{`{"b": 2, "$set": {"a": 1}}`, 52, "The dollar ($) prefixed field '$set' in '$set' is not valid for storage."},
		{`{"$set": 5}`, 9, "Modifiers operate on fields but we found type int instead. For example: {$mod: {<field>: ...}} not {$set: 5}"},
		{`{"$set": {}}`, 9, "'$set' is empty. You must specify a field like so: {$set: {<field>: ...}}"},
		{`{"$set": {"a": 1}, "$inc": {"a": 1}}`, 40, "Updating the path 'a' would create a conflict at 'a'"},
		{`{"$set": {"a": 1, "a.b": 1}}`, 40, "Updating the path 'a.b' would create a conflict at 'a'"},
		{`{"$set": {"a.b": 1}, "$unset": {"a": 1}}`, 40, "Updating the path 'a' would create a conflict at 'a'"},
		{`{"$rename": {"a": "b"}, "$set": {"b": 1}}`, 40, "Updating the path 'b' would create a conflict at 'b'"},
		{`{"$inc": {"a": "x"}}`, 14, `Cannot increment with non-numeric argument: {a: "x"}`},
		{`{"$mul": {"a": null}}`, 14, `Cannot multiply with non-numeric argument: {a: null}`},
		{`{"$rename": {"a": 1}}`, 2, "The 'to' field for $rename must be a string: a: 1"},
		{`{"$rename": {"a": "a"}}`, 2, `The source and target field for $rename must differ: a: "a"`},
		{`{"$set": {"a..b": 1}}`, 56, ""},
		{`{"$set": {"": 1}}`, 9, "An empty update path is not valid."},
	}
	for _, tc := range tests {
		_, err := CompileUpdate(mj(t, tc.update))
		code, msg := errInfo(err)
		if code != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("CompileUpdate(%s) = %d %q, want %d %q", tc.update, code, msg, tc.code, tc.msg)
		}
	}
}

func TestUpdateApplyErrors(t *testing.T) {
	tests := []struct {
		update, doc string
		code        int32
		msg         string
	}{
		{`{"$inc": {"a": 1}}`, `{"_id": 1, "a": "x"}`, 14,
			"Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'a' of non-numeric type string"},
		{`{"$mul": {"a.b": 2}}`, `{"_id": "k", "a": {"b": [1]}}`, 14,
			`Cannot apply $mul to a value of non-numeric type. {_id: "k"} has the field 'b' of non-numeric type array`},
		{`{"$inc": {"a": {"$numberLong": "1"}}}`, `{"_id": 1, "a": {"$numberLong": "9223372036854775807"}}`, 2, ""},
		{`{"$set": {"_id": 2}}`, `{"_id": 1}`, 66, "Performing an update on the path '_id' would modify the immutable field '_id'"},
		{`{"$unset": {"_id": 1}}`, `{"_id": 1}`, 66, ""},
		{`{"$set": {"a.b": 1}}`, `{"_id": 1, "a": 5}`, 28, "Cannot create field 'b' in element {a: 5}"},
		{`{"$set": {"a.b": 1}}`, `{"_id": 1, "a": [1]}`, 28, "Cannot create field 'b' in element {a: [ 1 ]}"},
		{`{"_id": 2, "x": 1}`, `{"_id": 1}`, 66, "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 2"},
		{`{"$push": {"a": 1}}`, `{"_id": 1, "a": 1}`, 2, "The field 'a' must be an array but is of type int in document {_id: 1}"},
		{`{"$pop": {"a": 1}}`, `{"_id": 1, "a": 1}`, 14, ""},
		{`{"$pull": {"a": 1}}`, `{"_id": 1, "a": 1}`, 2, ""},
	}
	for _, tc := range tests {
		u, err := CompileUpdate(mj(t, tc.update))
		if err != nil {
			t.Fatalf("CompileUpdate(%s): %v", tc.update, err)
		}
		_, _, err = u.Apply(mj(t, tc.doc))
		code, msg := errInfo(err)
		if code != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("Apply(%s, %s) = %d %q, want %d %q", tc.update, tc.doc, code, msg, tc.code, tc.msg)
		}
	}
}

func TestUpsertBase(t *testing.T) {
	tests := []struct {
		filter, update, want string
	}{
		{`{"a": 1}`, `{"$set": {"b": 2}}`, `{"a": 1, "b": 2}`},
		{`{"b": 1, "_id": 7}`, `{"$inc": {"n": 1}}`, `{"_id": 7, "b": 1, "n": 1}`},
		{`{"a.b": 1, "c": {"$eq": 2}, "d": {"$gt": 1}}`, `{"$set": {"x": 1}}`, `{"a": {"b": 1}, "c": 2, "x": 1}`},
		{`{"$and": [{"a": 1}, {"b": 2}]}`, `{"$setOnInsert": {"c": 3}}`, `{"a": 1, "b": 2, "c": 3}`},
		{`{"a": 1}`, `{"$set": {"a": 5}}`, `{"a": 5}`},
		{`{"a": 1}`, `{"$set": {"_id": 9}}`, `{"_id": 9, "a": 1}`},
		{`{"_id": 3, "a": 1}`, `{"x": 1}`, `{"_id": 3, "x": 1}`},
		{`{"a": 1}`, `{"x": 1}`, `{"x": 1}`},
		{`{"a": {"$regularExpression": {"pattern": "x", "options": ""}}}`, `{"$set": {"b": 1}}`, `{"b": 1}`},
	}
	for _, tc := range tests {
		u, err := CompileUpdate(mj(t, tc.update))
		if err != nil {
			t.Fatal(err)
		}
		out, err := u.UpsertBase(mj(t, tc.filter))
		if err != nil {
			t.Errorf("UpsertBase(%s, %s): %v", tc.filter, tc.update, err)
			continue
		}
		if got, want := js(t, out), js(t, mj(t, tc.want)); got != want {
			t.Errorf("UpsertBase(%s, %s) = %s, want %s", tc.filter, tc.update, got, want)
		}
	}
	u, _ := CompileUpdate(mj(t, `{"$set": {"_id": 2}}`))
	if _, err := u.UpsertBase(mj(t, `{"_id": 1}`)); err == nil {
		t.Error("changing a filter _id in an upsert should fail")
	}
	u, _ = CompileUpdate(mj(t, `{"$set": {"x": 1}}`))
	if code, _ := errInfo(func() error { _, err := u.UpsertBase(mj(t, `{"a": 1, "a.b": 2}`)); return err }()); code != 54 {
		t.Errorf("conflicting filter equalities: code %d, want 54", code)
	}
}
