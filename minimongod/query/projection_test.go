package query

import (
	"testing"
)

func TestProjection(t *testing.T) {
	doc := `{"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 4, "d": 5}, 6, [{"c": 7}]], "f": "x"}`
	tests := []struct {
		spec, want string
	}{
		{``, doc},
		{`{"a": 1}`, `{"_id": 1, "a": 1}`},
		{`{"a": true, "f": 1}`, `{"_id": 1, "a": 1, "f": "x"}`},
		{`{"f": 1, "a": 1}`, `{"_id": 1, "a": 1, "f": "x"}`},
		{`{"a": 1, "_id": 0}`, `{"a": 1}`},
		{`{"_id": 0}`, `{"a": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 4, "d": 5}, 6, [{"c": 7}]], "f": "x"}`},
		{`{"_id": 1}`, `{"_id": 1}`},
		{`{"b.c": 1}`, `{"_id": 1, "b": {"c": 2}}`},
		{`{"b": {"c": 1}}`, `{"_id": 1, "b": {"c": 2}}`},
		{`{"e.c": 1}`, `{"_id": 1, "e": [{"c": 4}, [{"c": 7}]]}`},
		{`{"a.z": 1}`, `{"_id": 1}`},
		{`{"z": 1}`, `{"_id": 1}`},
		{`{"a": 0}`, `{"_id": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 4, "d": 5}, 6, [{"c": 7}]], "f": "x"}`},
		{`{"a": false, "b": 0, "e": 0, "_id": 0}`, `{"f": "x"}`},
		{`{"b.c": 0, "e.d": 0}`, `{"_id": 1, "a": 1, "b": {"d": 3}, "e": [{"c": 4}, 6, [{"c": 7}]], "f": "x"}`},
		{`{"a.c": 0}`, doc},
		{`{"_id": 1, "a": 0}`, `{"_id": 1, "b": {"c": 2, "d": 3}, "e": [{"c": 4, "d": 5}, 6, [{"c": 7}]], "f": "x"}`},
	}
	for _, tc := range tests {
		p, err := CompileProjection(mj(t, tc.spec))
		if err != nil {
			t.Errorf("CompileProjection(%s): %v", tc.spec, err)
			continue
		}
		got := js(t, p.Apply(nil, mj(t, doc)))
		if want := js(t, mj(t, tc.want)); got != want {
			t.Errorf("Apply(%s) = %s, want %s", tc.spec, got, want)
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	tests := []struct {
		spec string
		code int32
		msg  string
	}{
		{`{"a": 1, "b": 0}`, 31254, "Cannot do exclusion on field b in inclusion projection"},
		{`{"a": 0, "b": 1}`, 31253, "Cannot do inclusion on field b in exclusion projection"},
		{`{"a": 1, "a.b": 1}`, 31249, "Path collision at a.b remaining portion b"},
		{`{"a.b": 1, "a": 1}`, 31250, "Path collision at a"},
		{`{"a": {"$slice": 1}}`, 238, ""},
		{`{"a": "x"}`, 238, ""},
	}
	for _, tc := range tests {
		_, err := CompileProjection(mj(t, tc.spec))
		code, msg := errInfo(err)
		if code != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("CompileProjection(%s) = %d %q, want %d %q", tc.spec, code, msg, tc.code, tc.msg)
		}
	}
}
