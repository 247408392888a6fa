package engine

import (
	"maps"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestFlattenSkipsUnreadableDocuments: a nested document with an element
// that cannot be read gives none of its fields, its siblings give theirs,
// and an unreadable top level gives nothing.
func TestFlattenSkipsUnreadableDocuments(t *testing.T) {
	good, err := bson.Marshal(bson.D{{Key: "a", Value: int32(1)},
		{Key: "bad", Value: bson.D{{Key: "x", Value: int64(2)}, {Key: "in", Value: bson.D{{Key: "y", Value: 3.5}}}, {Key: "s", Value: "str"}}},
		{Key: "c", Value: bson.D{{Key: "z", Value: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(FlattenNumbers(good))); !slices.Equal(got, []string{"a", "bad.in.y", "bad.x", "c.z"}) {
		t.Fatalf("whole document: %v", got)
	}
	// Damage the string's length in "bad" so that its last element cannot be read.
	doc := slices.Clone(good)
	i := slices.Index(doc, 's') // the key "s", then its int32 length
	doc[i+2] = 0x7f
	if got := slices.Sorted(maps.Keys(FlattenNumbers(doc))); !slices.Equal(got, []string{"a", "c.z"}) {
		t.Errorf("with bad's last element unreadable: %v, want a and c.z", got)
	}
	if got := FlattenNumbers(doc[:len(doc)-1]); len(got) != 0 {
		t.Errorf("a cut document gives %v, want nothing", got)
	}
}
