package query

import (
	"math"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// trickyValues are values Compare finds equal across types and encodings,
// and values that are close but not equal.
func trickyValues(t *testing.T) []bsoncore.Value {
	t.Helper()
	dec := func(s string) bson.Decimal128 {
		d, err := bson.ParseDecimal128(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	raw := []any{
		int32(1), int64(1), 1.0, dec("1"), dec("1.00"), dec("1E0"),
		int32(0), 0.0, math.Copysign(0, -1), dec("0"), dec("-0"), dec("0E+10"),
		math.NaN(), dec("NaN"), math.Inf(1), dec("Infinity"), math.Inf(-1), dec("-Infinity"),
		0.1, dec("0.1"), int64(1) << 53, float64(int64(1) << 53), int64(1)<<53 + 1, math.MaxInt64, float64(math.MaxInt64),
		"a", "b", bson.Symbol("a"), bson.JavaScript("a"),
		bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1.0}}, bson.D{{Key: "a", Value: int64(1)}}, bson.D{{Key: "b", Value: 1}},
		bson.D{{Key: "a", Value: bson.A{1, 2.0}}}, bson.D{{Key: "a", Value: bson.A{1.0, int64(2)}}},
		bson.A{1, "x"}, bson.A{1.0, "x"}, bson.A{},
		bson.D{}, nil, bson.Undefined{}, bson.MinKey{}, bson.MaxKey{},
		true, false, bson.DateTime(5), bson.Timestamp{T: 1, I: 2},
		bson.Binary{Subtype: 0, Data: []byte("x")}, bson.Binary{Subtype: 4, Data: []byte("x")},
		bson.Regex{Pattern: "a", Options: "i"}, bson.Regex{Pattern: "a", Options: ""},
		bson.ObjectID{1}, bson.ObjectID{2},
		bson.CodeWithScope{Code: "f", Scope: bson.D{{Key: "x", Value: 1}}},
		bson.CodeWithScope{Code: "f", Scope: bson.D{{Key: "x", Value: 1.0}}},
	}
	var out []bsoncore.Value
	for _, r := range raw {
		b, err := bson.Marshal(bson.D{{Key: "v", Value: r}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bsoncore.Document(b).Lookup("v"))
	}
	return out
}

// TestValueSetAgreesWithCompare checks that values Compare finds equal
// hash alike, so the set finds exactly what a scan with Compare finds.
func TestValueSetAgreesWithCompare(t *testing.T) {
	vals := trickyValues(t)
	for i, a := range vals {
		set := newValueSet(1)
		set.add(a)
		for j, b := range vals {
			if want := Compare(a, b) == 0; set.contains(b) != want {
				t.Errorf("values %d (%s) and %d (%s): set says %v, Compare says equal=%v", i, a, j, b, !want, want)
			}
		}
	}
}

// TestAddToSetEachWork checks that $addToSet with $each of 100,000
// distinct values costs work in proportion to the values, not to their
// square: at most a few seconds of CPU (a scan of the array for each value
// took 37 s), and no more comparisons than values.
func TestAddToSetEachWork(t *testing.T) {
	const n = 100000
	u, err := CompileUpdate(addToSetUpdate(t, n))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{}}})
	start := cpuTime(t)
	done := make(chan error, 1)
	var out bson.Raw
	go func() {
		var err error
		out, _, err = u.Apply(doc)
		done <- err
	}()
	const budget = 5 * time.Second
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		case <-time.After(50 * time.Millisecond):
			if used := cpuTime(t) - start; used > budget {
				t.Fatalf("$addToSet of %d values used %v of CPU and is not done, want under %v", n, used, budget)
			}
		}
	}
	t.Logf("$addToSet of %d values: %v of CPU", n, cpuTime(t)-start)
	a, _ := out.LookupErr("a")
	vals, err := a.Array().Values()
	if err != nil || len(vals) != n {
		t.Fatalf("%d values in the array (%v), want %d", len(vals), err, n)
	}
	// Each value is found in its bucket with about one comparison.
	set := newValueSet(n)
	for _, v := range vals {
		set.add(bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	for _, v := range vals {
		if !set.contains(bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}) {
			t.Fatalf("%s not found", v)
		}
	}
	if set.compares > n+n/100 {
		t.Errorf("%d comparisons to find %d values, want about one each", set.compares, n)
	}
}

// cpuTime is the CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
