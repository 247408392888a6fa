package query

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// FuzzUpdate compiles arbitrary update documents and applies them to
// arbitrary documents: nothing may panic, every result must be valid BSON
// whose _id is the original one, array backfill stays bounded, and an
// update applies again to its own result.
func FuzzUpdate(f *testing.F) {
	seeds := [][2]string{
		{`{"$set": {"a.b": 1}, "$inc": {"c": 2}}`, `{"_id": 1, "a": {"b": 0}}`},
		{`{"$set": {"arr.5": "x"}}`, `{"_id": 2, "arr": [1]}`},
		{`{"$push": {"a": {"$each": [1, 2], "$slice": -1, "$sort": 1}}}`, `{"_id": 3, "a": [3]}`},
		{`{"$unset": {"a.0.b": ""}, "$rename": {"x": "y"}}`, `{"_id": 4, "a": [{"b": 1}], "x": 5}`},
		{`{"$pull": {"a": {"$gt": 1}}, "$addToSet": {"b": 1}}`, `{"_id": 5, "a": [1, 2, 3], "b": []}`},
		{`{"$min": {"a": 1}, "$max": {"b": 9}, "$mul": {"c": 2}, "$currentDate": {"d": true}}`, `{"_id": 6, "c": 1.5}`},
		{`{"x": 1, "y": [1, 2]}`, `{"_id": 7, "z": 1}`},
		{`{"$setOnInsert": {"a": 1}, "$pop": {"b": -1}}`, `{"_id": 8, "b": [1, 2]}`},
	}
	for _, s := range seeds {
		f.Add([]byte(mj(f, s[0])), []byte(mj(f, s[1])))
	}
	f.Fuzz(func(t *testing.T, update, doc []byte) {
		if bsoncore.Document(update).Validate() != nil || bsoncore.Document(doc).Validate() != nil {
			t.Skip()
		}
		u, err := CompileUpdate(update)
		if err != nil {
			return
		}
		out, _, err := u.Apply(doc)
		if err != nil {
			return
		}
		checkValid(t, "update", out)
		if len(out) > len(doc)+len(update)+9*MaxArrayPadding+4096 {
			t.Fatalf("update grew a %d-byte document to %d bytes", len(doc), len(out))
		}
		before, had := bsoncore.Document(doc).LookupErr("_id")
		after, has := bsoncore.Document(out).LookupErr("_id")
		if had == nil && (has != nil || before.Type != after.Type || !bytes.Equal(before.Data, after.Data)) {
			t.Fatalf("update changed _id %v to %v", before, after)
		}
		if again, _, err := u.Apply(out); err == nil {
			checkValid(t, "update applied twice", again)
		}
	})
}
