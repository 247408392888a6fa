package keyenc_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/query"
)

func enc(v bsoncore.Value) []byte { return keyenc.Append(nil, v) }

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// checkPair verifies that key order matches BSON order for a and b, alone
// and as the first halves of compound keys.
func checkPair(t *testing.T, a, b, x, y bsoncore.Value) {
	t.Helper()
	want := query.Compare(a, b)
	if got := sign(bytes.Compare(enc(a), enc(b))); got != want {
		t.Fatalf("order(%s, %s): keys %d, Compare %d\nka=%x\nkb=%x", a, b, got, want, enc(a), enc(b))
	}
	wantPair := want
	if wantPair == 0 {
		wantPair = query.Compare(x, y)
	}
	ka := keyenc.Append(enc(a), x)
	kb := keyenc.Append(enc(b), y)
	if got := sign(bytes.Compare(ka, kb)); got != wantPair {
		t.Fatalf("compound order((%s,%s), (%s,%s)): keys %d, want %d", a, x, b, y, got, wantPair)
	}
}

func TestKeyOrderProperty(t *testing.T) {
	s := randSource{rand.New(rand.NewPCG(1, 2))}
	for range 200000 {
		checkPair(t, genValue(s, 3), genValue(s, 3), genValue(s, 1), genValue(s, 1))
	}
}

func i32(v int32) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, v)}
}

func i64(v int64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, v)}
}

func f64(v float64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, v)}
}

func str(s string) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeString, Data: bsoncore.AppendString(nil, s)}
}

func dec(s string) bsoncore.Value {
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		panic(err)
	}
	h, l := d.GetBytes()
	return bsoncore.Value{Type: bsoncore.TypeDecimal128, Data: bsoncore.AppendDecimal128(nil, h, l)}
}

func TestKeyEdgeCases(t *testing.T) {
	null := bsoncore.Value{Type: bsoncore.TypeNull}
	undef := bsoncore.Value{Type: bsoncore.TypeUndefined}
	tests := []struct {
		name string
		a, b bsoncore.Value
		want int
	}{
		{"int32 equals int64", i32(3), i64(3), 0},
		{"int32 equals double", i32(3), f64(3), 0},
		{"decimal equals int", dec("3"), i32(3), 0},
		{"decimal fraction", dec("2.5"), f64(2.5), 0},
		{"negative zero", f64(math.Copysign(0, -1)), f64(0), 0},
		{"nan below -inf", f64(math.NaN()), f64(math.Inf(-1)), -1},
		{"nan equals nan", f64(math.NaN()), f64(-math.NaN()), 0},
		{"decimal nan equals nan", dec("NaN"), f64(math.NaN()), 0},
		{"int64 above 2^53", i64(1<<53 + 1), f64(0x1p53), 1},
		{"int64 neighbours", i64(1<<62 + 1), i64(1 << 62), 1},
		{"int64 max vs 2^63", i64(math.MaxInt64), f64(0x1p63), -1},
		{"int64 min vs -2^63", i64(math.MinInt64), f64(-0x1p63), 0},
		{"negative int64 beyond 2^53", i64(-(1<<53 + 1)), f64(-0x1p53), -1},
		{"null equals undefined", null, undef, 0},
		{"string nul", str("a"), str("a\x00"), -1},
		{"string nul vs 1", str("a\x00"), str("a\x01"), -1},
		{"string prefix", str("a"), str("ab"), -1},
		{"number below string", f64(math.Inf(1)), str(""), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := query.Compare(tc.a, tc.b); got != tc.want {
				t.Errorf("Compare = %d, want %d", got, tc.want)
			}
			if got := sign(bytes.Compare(enc(tc.a), enc(tc.b))); got != tc.want {
				t.Errorf("key order = %d, want %d", got, tc.want)
			}
		})
	}
}

func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6})
	f.Add([]byte{0, 4, 0, 4}, []byte{0, 5, 0, 4})
	f.Add([]byte{0, 8, 0, 3, 0, 1}, []byte{0, 8, 0, 3, 0, 2})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		sa, sb := &byteSource{a}, &byteSource{b}
		va, vb := genValue(sa, 3), genValue(sb, 3)
		checkPair(t, va, vb, genValue(sa, 1), genValue(sb, 1))
	})
}
