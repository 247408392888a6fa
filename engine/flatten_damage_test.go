package engine

import (
	"maps"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/ftdc"
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

// TestFlattenAfterAnotherLayout: names found by the last document's order
// are right when the next one gains, loses and reorders fields.
func TestFlattenAfterAnotherLayout(t *testing.T) {
	docs := []bson.D{
		{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "x", Value: 2}, {Key: "y", Value: 3}}}, {Key: "c", Value: 4}},
		{{Key: "new", Value: 5}, {Key: "a", Value: 6}, {Key: "b", Value: bson.D{{Key: "y", Value: 7}, {Key: "x", Value: 8}}}},
		{{Key: "a", Value: 9}, {Key: "b", Value: bson.D{{Key: "x", Value: 10}}}, {Key: "c", Value: 11}, {Key: "d", Value: 12}},
	}
	want := []map[string]float64{
		{"a": 1, "b.x": 2, "b.y": 3, "c": 4},
		{"new": 5, "a": 6, "b.y": 7, "b.x": 8},
		{"a": 9, "b.x": 10, "c": 11, "d": 12},
	}
	for round := range 2 {
		for i, d := range docs {
			raw, err := bson.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if got := FlattenNumbers(raw); !maps.Equal(got, want[i]) {
				t.Errorf("round %d, document %d: %v, want %v", round, i, got, want[i])
			}
		}
	}
}

// BenchmarkFlattenNumbers flattens the serverStatus samples of a real 8.0
// replica-set member in turn, as the sampler does each second.
func BenchmarkFlattenNumbers(b *testing.B) {
	r, err := ftdc.Open(replayedFile)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var docs []bson.Raw
	for len(docs) == 0 {
		it, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if c, ok := it.(*ftdc.Chunk); ok {
			for s := range c.Samples {
				d, err := c.Doc(s)
				if err != nil {
					b.Fatal(err)
				}
				docs = append(docs, d.Lookup("serverStatus").Document())
			}
		}
	}
	n := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n = len(FlattenNumbers(docs[i%len(docs)]))
	}
	b.ReportMetric(float64(n), "fields")
}
