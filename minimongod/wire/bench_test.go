package wire

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// insertMsg builds an insert of n documents of about 1 KB each in a kind-1
// sequence.
func insertMsg(b testing.TB, n int) []byte {
	body := doc(b, bson.D{{Key: "insert", Value: "c"}, {Key: "ordered", Value: true}, {Key: "$db", Value: "test"}})
	docs := make([]bson.Raw, n)
	for i := range docs {
		docs[i] = doc(b, bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: "user"}, {Key: "n", Value: 1.5},
			{Key: "tags", Value: bson.A{"a", "b", "c"}}, {Key: "pad", Value: strings.Repeat("x", 920)}})
	}
	return AppendMsgSequences(nil, 1, 0, 0, body, Sequence{Identifier: "documents", Docs: docs})
}

// benchDecode measures Decode of msg.
func benchDecode(b *testing.B, msg []byte) {
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeInsert1000x1KB(b *testing.B) {
	benchDecode(b, insertMsg(b, 1000))
}

func BenchmarkDecodeFind(b *testing.B) {
	body := doc(b, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 5}}}}},
		{Key: "limit", Value: int32(10)}, {Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}},
		{Key: "$db", Value: "test"}})
	benchDecode(b, AppendMsg(nil, 1, 0, 0, body))
}

func BenchmarkAppendMsg200B(b *testing.B) {
	body := doc(b, bson.D{{Key: "ok", Value: 1.0}, {Key: "s", Value: strings.Repeat("x", 175)}})
	if len(body) != 200 {
		b.Fatalf("body is %d bytes, want 200", len(body))
	}
	dst := make([]byte, 0, 512)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendMsg(dst[:0], 1, 2, 0, body)
	}
}

// BenchmarkValidate compares full validation of one 1 KB document by this
// package and by bsoncore, which checks top-level elements only.
func BenchmarkValidate(b *testing.B) {
	d := doc(b, bson.D{{Key: "_id", Value: int32(1)}, {Key: "name", Value: "user"}, {Key: "tags", Value: bson.A{"a", "b", "c"}},
		{Key: "pad", Value: strings.Repeat("x", 920)}})
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			if err := validateDoc(d, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bsoncore", func(b *testing.B) {
		for b.Loop() {
			if err := bsoncore.Document(d).Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
