package rawbson

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

func TestNestingAndLevels(t *testing.T) {
	deep := bson.D{{Key: "a", Value: 1}}
	for i := 1; i < 300; i++ {
		deep = bson.D{{Key: "a", Value: deep}}
	}
	tests := []struct {
		name           string
		doc            bson.D
		limit          int
		nesting, level int
	}{
		{"empty", bson.D{}, 10, 0, 1},
		{"a scalar field", bson.D{{Key: "a", Value: 1}}, 10, 1, 1},
		{"an empty subdocument", bson.D{{Key: "a", Value: bson.D{}}}, 10, 1, 2},
		{"an empty array", bson.D{{Key: "a", Value: bson.A{}}}, 10, 1, 2},
		{"two levels", bson.D{{Key: "a", Value: bson.D{{Key: "b", Value: 1}}}}, 10, 2, 2},
		{"an array of documents", bson.D{{Key: "a", Value: bson.A{1, bson.D{{Key: "b", Value: bson.A{2}}}}}}, 10, 4, 4},
		{"the deepest branch counts", bson.D{{Key: "x", Value: 1}, {Key: "a", Value: bson.D{{Key: "b", Value: bson.D{{Key: "c", Value: 1}}}}}, {Key: "y", Value: bson.D{}}}, 10, 3, 3},
		{"300 levels, limit 180", deep, 180, 181, 181},
		{"limit 0", bson.D{{Key: "a", Value: bson.D{}}}, 0, 1, 1},
	}
	for _, tc := range tests {
		raw, err := bson.Marshal(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := Nesting(bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: raw}, tc.limit); got != tc.nesting {
			t.Errorf("%s: Nesting = %d, want %d", tc.name, got, tc.nesting)
		}
		if got := Levels(raw, tc.limit); got != tc.level {
			t.Errorf("%s: Levels = %d, want %d", tc.name, got, tc.level)
		}
	}
	if got := Nesting(bsoncore.Value{Type: bsoncore.TypeInt32, Data: []byte{1, 0, 0, 0}}, 5); got != 0 {
		t.Errorf("Nesting of a scalar = %d, want 0", got)
	}
}
