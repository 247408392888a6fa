package query

import (
	"testing"
)

func TestSortCompare(t *testing.T) {
	tests := []struct {
		spec, a, b string
		want       int
	}{
		{`{"a": 1}`, `{"a": 1}`, `{"a": 2}`, -1},
		{`{"a": -1}`, `{"a": 1}`, `{"a": 2}`, 1},
		{`{"a": 1}`, `{"a": 1}`, `{"a": 1.0}`, 0},
		{`{"a": 1}`, `{}`, `{"a": null}`, 0},
		{`{"a": 1}`, `{}`, `{"a": 0}`, -1},
		{`{"a": 1}`, `{"a": "x"}`, `{"a": 5}`, 1},
		{`{"a": 1}`, `{"a": [5, 1]}`, `{"a": 2}`, -1},
		{`{"a": -1}`, `{"a": [5, 1]}`, `{"a": 2}`, -1},
		{`{"a": 1}`, `{"a": []}`, `{}`, -1},
		{`{"a": 1}`, `{"a": []}`, `{"a": {"$minKey": 1}}`, 1},
		{`{"a.b": 1}`, `{"a": [{"b": 3}, {"b": 0}]}`, `{"a": {"b": 1}}`, -1},
		{`{"a.b": -1}`, `{"a": [{"b": 3}, {"b": 0}]}`, `{"a": {"b": 1}}`, -1},
		{`{"a": 1, "b": -1}`, `{"a": 1, "b": 1}`, `{"a": 1, "b": 2}`, 1},
		{`{"a": 1.0, "b": {"$numberLong": "1"}}`, `{"a": 1, "b": 1}`, `{"a": 1, "b": 2}`, -1},
		{`{}`, `{"a": 1}`, `{"a": 2}`, 0},
	}
	for _, tc := range tests {
		s, err := CompileSort(mj(t, tc.spec))
		if err != nil {
			t.Fatalf("CompileSort(%s): %v", tc.spec, err)
		}
		if got := s.Compare(mj(t, tc.a), mj(t, tc.b)); sign(got) != tc.want {
			t.Errorf("sort %s: Compare(%s, %s) = %d, want %d", tc.spec, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCompileSort(t *testing.T) {
	s, err := CompileSort(mj(t, `{"a": 1, "b.c": -1}`))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Fields()
	if len(f) != 2 || f[0] != (SortField{"a", false}) || f[1] != (SortField{"b.c", true}) {
		t.Errorf("Fields = %+v", f)
	}
	for _, spec := range []string{`{"a": 2}`, `{"a": "x"}`, `{"a": 0}`} {
		_, err := CompileSort(mj(t, spec))
		code, msg := errInfo(err)
		if code != 2 || msg != "$sort key ordering must be 1 (for ascending) or -1 (for descending)" {
			t.Errorf("CompileSort(%s) = %d %q", spec, code, msg)
		}
	}
}
