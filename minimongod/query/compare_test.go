package query

import (
	"math"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

func TestCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{`{"$minKey": 1}`, `null`, -1},
		{`null`, `{"$undefined": true}`, 0},
		{`null`, `-1e308`, -1},
		{`{"$numberDouble": "NaN"}`, `{"$numberDouble": "-Infinity"}`, -1},
		{`{"$numberDouble": "NaN"}`, `{"$numberDouble": "NaN"}`, 0},
		{`3`, `{"$numberLong": "3"}`, 0},
		{`3`, `3.0`, 0},
		{`3`, `3.5`, -1},
		{`{"$numberLong": "9007199254740993"}`, `9007199254740992.0`, 1},
		{`{"$numberLong": "9223372036854775807"}`, `9223372036854775808.0`, -1},
		{`{"$numberDecimal": "3.0"}`, `3`, 0},
		{`{"$numberDecimal": "0.1"}`, `0.1`, -1},
		{`{"$numberDecimal": "-Infinity"}`, `-1e308`, -1},
		{`1e308`, `""`, -1},
		{`"a"`, `"b"`, -1},
		{`"a"`, `"a\u0000"`, -1},
		{`{"$symbol": "b"}`, `"a"`, 1},
		{`"z"`, `{}`, -1},
		{`{}`, `[]`, -1},
		{`{"a": 1}`, `{"a": 2}`, -1},
		{`{"a": 1}`, `{"b": 0}`, -1},
		{`{"b": 1}`, `{"a": "x"}`, -1},
		{`{"a": 1}`, `{"a": 1, "b": 1}`, -1},
		{`[1, 2]`, `[1, 3]`, -1},
		{`[1, 2]`, `[1]`, 1},
		{`[]`, `{"$binary": {"base64": "", "subType": "00"}}`, -1},
		{`{"$binary": {"base64": "AQ==", "subType": "05"}}`, `{"$binary": {"base64": "AQI=", "subType": "00"}}`, -1},
		{`{"$binary": {"base64": "AQ==", "subType": "05"}}`, `{"$binary": {"base64": "AQ==", "subType": "00"}}`, 1},
		{`{"$oid": "000000000000000000000001"}`, `{"$oid": "000000000000000000000002"}`, -1},
		{`{"$oid": "ffffffffffffffffffffffff"}`, `false`, -1},
		{`false`, `true`, -1},
		{`true`, `{"$date": {"$numberLong": "-1"}}`, -1},
		{`{"$date": {"$numberLong": "-5"}}`, `{"$date": {"$numberLong": "3"}}`, -1},
		{`{"$date": {"$numberLong": "3"}}`, `{"$timestamp": {"t": 0, "i": 0}}`, -1},
		{`{"$timestamp": {"t": 1, "i": 2}}`, `{"$timestamp": {"t": 2, "i": 1}}`, -1},
		{`{"$timestamp": {"t": 4294967295, "i": 1}}`, `{"$regularExpression": {"pattern": "", "options": ""}}`, -1},
		{`{"$regularExpression": {"pattern": "a", "options": "i"}}`, `{"$regularExpression": {"pattern": "a", "options": "m"}}`, -1},
		{`{"$regularExpression": {"pattern": "a", "options": ""}}`, `{"$maxKey": 1}`, -1},
	}
	for _, tc := range tests {
		a, b := mv(t, tc.a), mv(t, tc.b)
		if got := Compare(a, b); got != tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Compare(b, a); got != -tc.want {
			t.Errorf("Compare(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestCompareFloatInt(t *testing.T) {
	tests := []struct {
		f    float64
		i    int64
		want int
	}{
		{math.NaN(), math.MinInt64, -1},
		{math.Inf(1), math.MaxInt64, 1},
		{0x1p63, math.MaxInt64, 1},
		{-0x1p63, math.MinInt64, 0},
		{0x1p53, 1<<53 + 1, -1},
		{-0x1p53, -(1<<53 + 1), 1},
		{2.5, 2, 1},
		{-2.5, -2, -1},
	}
	for _, tc := range tests {
		if got := compareFloatInt(tc.f, tc.i); got != tc.want {
			t.Errorf("compareFloatInt(%v, %d) = %d, want %d", tc.f, tc.i, got, tc.want)
		}
	}
}

func TestLookup(t *testing.T) {
	doc := mj(t, `{"a": {"b": [10, {"c": 5}]}, "x": 1}`)
	tests := []struct {
		path string
		want string
		ok   bool
	}{
		{"x", "1", true},
		{"a.b.0", "10", true},
		{"a.b.1.c", "5", true},
		{"a.b.c", "", false},
		{"a.z", "", false},
		{"x.y", "", false},
	}
	for _, tc := range tests {
		v, ok := Lookup(doc, tc.path)
		if ok != tc.ok || ok && Compare(v, mv(t, tc.want)) != 0 {
			t.Errorf("Lookup(%q) = %v, %v; want %s, %v", tc.path, v, ok, tc.want, tc.ok)
		}
	}
	_ = bsoncore.Value{}
}
