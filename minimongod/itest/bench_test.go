package itest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/options"
	"wtd/minimongod/wt"
)

// The wire path (Go driver -> minimongod) beside the same operations
// straight on WiredTiger through the binding, in one run:
//
//	go test ./minimongod/itest -run '^$' -bench . -benchtime 2s
const benchDocBytes = 1000

func benchDoc(r *rand.ChaCha8, id int) []byte {
	pad := make([]byte, benchDocBytes-30)
	r.Read(pad)
	b, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}, {Key: "pad", Value: pad}})
	return b
}

// rawEngine opens WiredTiger with minimongod's own open string.
func rawEngine(b *testing.B) (*wt.Conn, *wt.Session) {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "journal"), 0o755)
	opts, err := options.Parse([]string{"--dbpath", dir, "--wiredTigerCacheSizeGB", "1"}, 0)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := wt.Open(dir, opts.WiredTigerOpenConfig(0, "/usr/lib/x86_64-linux-gnu/libwiredtiger_snappy.so"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close("") })
	s, err := conn.OpenSession("")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Create("table:c", "key_format=u,value_format=u,"+opts.CollectionConfig()); err != nil {
		b.Fatal(err)
	}
	return conn, s
}

func rawKey(id int) []byte {
	return keyenc.Append(nil, bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(id))})
}

func BenchmarkInsertBatch1000x1KB(b *testing.B) {
	r := rand.NewChaCha8([32]byte{2})
	b.Run("wire", func(b *testing.B) {
		s := start(b, "--wiredTigerCacheSizeGB", "1")
		c := s.db("bench").Collection("c")
		id := 0
		b.SetBytes(1000 * benchDocBytes)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			docs := make([]any, 1000)
			for j := range docs {
				docs[j] = bson.Raw(benchDoc(r, id))
				id++
			}
			b.StartTimer()
			if _, err := c.InsertMany(ctx, docs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		_, s := rawEngine(b)
		cur, _ := s.Cursor("table:c", false)
		id := 0
		b.SetBytes(1000 * benchDocBytes)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			docs := make([][]byte, 1000)
			keys := make([][]byte, 1000)
			for j := range docs {
				docs[j], keys[j] = benchDoc(r, id), rawKey(id)
				id++
			}
			b.StartTimer()
			s.Begin()
			for j := range docs {
				if err := cur.Insert(keys[j], docs[j]); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Commit(false); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPointRead(b *testing.B) {
	const n = 50_000
	r := rand.NewChaCha8([32]byte{3})
	b.Run("wire", func(b *testing.B) {
		s := start(b, "--wiredTigerCacheSizeGB", "1")
		c := s.db("bench").Collection("c")
		for i := 0; i < n; i += 1000 {
			docs := make([]any, 1000)
			for j := range docs {
				docs[j] = bson.Raw(benchDoc(r, i+j))
			}
			c.InsertMany(ctx, docs)
		}
		pick := rand.New(rand.NewPCG(1, 1))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var out bson.Raw
			if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: pick.IntN(n)}}).Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		_, s := rawEngine(b)
		cur, _ := s.Cursor("table:c", true)
		s.Begin()
		for i := 0; i < n; i++ {
			cur.Insert(rawKey(i), benchDoc(r, i))
		}
		s.Commit(false)
		pick := rand.New(rand.NewPCG(1, 1))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			v, err := cur.Search(rawKey(pick.IntN(n)))
			if err != nil || len(v) == 0 {
				b.Fatal(err)
			}
			_ = append([]byte(nil), v...)
		}
	})
}
