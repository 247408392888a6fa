package itest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// idOffset is where benchDoc's int32 _id value starts: length, type byte,
// "_id\x00".
const idOffset = 4 + 1 + 4

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
	// One batch of documents, reused with fresh _ids patched in place, so
	// the client's own allocations do not weigh on either side.
	docs := make([][]byte, 1000)
	for j := range docs {
		docs[j] = benchDoc(r, j)
	}
	setIDs := func(base int) {
		for j, d := range docs {
			binary.LittleEndian.PutUint32(d[idOffset:], uint32(base+j))
		}
	}
	b.Run("wire", func(b *testing.B) {
		s := start(b, "--wiredTigerCacheSizeGB", "1")
		c := s.db("bench").Collection("c")
		batch := make([]any, len(docs))
		for j := range docs {
			batch[j] = bson.Raw(docs[j])
		}
		b.SetBytes(1000 * benchDocBytes)
		b.ResetTimer()
		cpu0 := s.cpuTime(b)
		for i := 0; i < b.N; i++ {
			setIDs(i * 1000)
			if _, err := c.InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((s.cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "server_cpu_ms/op")
	})
	// The same batch as one insert command through the driver's
	// RunCommand: no per-document _id check and re-marshal on the client.
	b.Run("wire-command", func(b *testing.B) {
		s := start(b, "--wiredTigerCacheSizeGB", "1")
		raws := make(bson.A, len(docs))
		for j := range docs {
			raws[j] = bson.Raw(docs[j])
		}
		cmd := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: raws}}
		b.SetBytes(1000 * benchDocBytes)
		b.ResetTimer()
		cpu0 := s.cpuTime(b)
		for i := 0; i < b.N; i++ {
			setIDs(i * 1000)
			var res struct {
				N int `bson:"n"`
			}
			if err := s.db("bench").RunCommand(ctx, cmd).Decode(&res); err != nil || res.N != len(docs) {
				b.Fatalf("insert: %v, n=%d", err, res.N)
			}
		}
		b.ReportMetric(float64((s.cpuTime(b)-cpu0).Microseconds())/1000/float64(b.N), "server_cpu_ms/op")
	})
	b.Run("raw", func(b *testing.B) {
		_, s := rawEngine(b)
		cur, _ := s.Cursor("table:c", false)
		b.SetBytes(1000 * benchDocBytes)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			setIDs(i * 1000)
			s.Begin()
			for j, d := range docs {
				if err := cur.Insert(rawKey(i*1000+j), d); err != nil {
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
		cpu0 := s.cpuTime(b)
		defer func() {
			b.ReportMetric(float64((s.cpuTime(b)-cpu0).Nanoseconds())/1000/float64(b.N), "server_cpu_us/op")
		}()
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

// cpuTime returns the user+system CPU the server process has used.
func (s *server) cpuTime(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ = 100
}
