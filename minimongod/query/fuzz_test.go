package query

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// FuzzMatch compiles arbitrary filters (and, from the same bytes,
// projections, updates and sorts) and applies them to arbitrary documents;
// nothing may panic and every produced document must be valid BSON.
func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{`{"a": 5}`, `{"a": [1, 5]}`},
		{`{"a.b": {"$gt": 1, "$lt": 5}}`, `{"a": [{"b": 2}, {"b": 7}]}`},
		{`{"$or": [{"a": null}, {"b": {"$in": [1, "x", null]}}]}`, `{"b": "x"}`},
		{`{"a": {"$not": {"$elemMatch": {"$gte": 2}}}}`, `{"a": [1, 2, 3]}`},
		{`{"a": {"$regex": "^x", "$options": "i"}, "b.0": {"$exists": true}}`, `{"a": "X", "b": [1]}`},
		{`{"a": {"$size": 2, "$all": [1]}, "c": {"$type": "number"}}`, `{"a": [1, 2], "c": 1.5}`},
		{`{"$set": {"a.b": 1}, "$inc": {"c": 2}}`, `{"_id": 1, "a": {"b": 0}}`},
		{`{"a.1": 1, "b": 0}`, `{"a": [0, 1], "b": {"c": 1}}`},
	}
	for _, s := range seeds {
		f.Add([]byte(mj(f, s[0])), []byte(mj(f, s[1])))
	}
	f.Fuzz(func(t *testing.T, filter, doc []byte) {
		if bsoncore.Document(filter).Validate() != nil || bsoncore.Document(doc).Validate() != nil {
			t.Skip()
		}
		if m, err := Compile(filter); err == nil {
			m.Match(doc)
			m.Predicates()
			m.IDEquality()
		}
		if p, err := CompileProjection(filter); err == nil {
			checkValid(t, "projection", p.Apply(nil, doc))
		}
		if u, err := CompileUpdate(filter); err == nil {
			if out, _, err := u.Apply(doc); err == nil {
				checkValid(t, "update", out)
			}
			if out, err := u.UpsertBase(doc); err == nil {
				checkValid(t, "upsert", out)
			}
		}
		if s, err := CompileSort(filter); err == nil {
			s.Compare(doc, doc)
			s.Compare(doc, filter)
		}
		Compare(bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: filter},
			bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc})
	})
}

// checkValid fails unless out is a valid document.
func checkValid(t *testing.T, what string, out []byte) {
	t.Helper()
	if err := bsoncore.Document(out).Validate(); err != nil {
		t.Fatalf("%s produced invalid BSON %x: %v", what, out, err)
	}
}

// benchDoc builds a document of about 1 KB.
func benchDoc(b *testing.B) bson.Raw {
	d := bson.D{{Key: "_id", Value: bson.NewObjectID()}}
	for i := 0; i < 27; i++ {
		d = append(d, bson.E{Key: fmt.Sprintf("field%02d", i), Value: strings.Repeat("x", 20)})
	}
	d = append(d, bson.E{Key: "age", Value: 42}, bson.E{Key: "status", Value: "active"},
		bson.E{Key: "tags", Value: bson.A{"a", "b", "c"}})
	raw, err := bson.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkMatch(b *testing.B) {
	doc := benchDoc(b)
	m, err := Compile(mj(b, `{"status": "active", "age": {"$gt": 30}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if !m.Match(doc) {
			b.Fatal("no match")
		}
	}
}
