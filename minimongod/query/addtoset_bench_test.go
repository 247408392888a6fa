package query

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// addToSetUpdate is {$addToSet: {a: {$each: [n distinct values]}}}: ints,
// doubles, strings and small documents by turns.
func addToSetUpdate(tb testing.TB, n int) bson.Raw {
	tb.Helper()
	each := make(bson.A, n)
	for i := range each {
		switch i % 4 {
		case 0:
			each[i] = int32(i)
		case 1:
			each[i] = float64(i) + 0.5
		case 2:
			each[i] = fmt.Sprintf("s%d", i)
		default:
			each[i] = bson.D{{Key: "k", Value: i}}
		}
	}
	u, err := bson.Marshal(bson.D{{Key: "$addToSet", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$each", Value: each}}}}}})
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// BenchmarkAddToSetEach applies $addToSet with $each of n distinct values
// to a document whose array is empty.
func BenchmarkAddToSetEach(b *testing.B) {
	doc, err := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			u, err := CompileUpdate(addToSetUpdate(b, n))
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := u.Apply(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
