package server

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wire"
)

// benchConn starts a server on a temporary dbpath and returns a connection
// to it that runs requests in process.
func benchConn(b *testing.B) (*clientConn, *discardConn) {
	s := openTestServer(b, "--wiredTigerCacheSizeGB", "1")
	dc := &discardConn{}
	c := s.newClientConn(dc)
	b.Cleanup(c.close)
	return c, dc
}

// message returns cmd as an OP_MSG request, decoded as the server reads it.
func message(b *testing.B, id int32, cmd bson.D, seqs ...wire.Sequence) *wire.Message {
	body, err := bson.Marshal(cmd)
	if err != nil {
		b.Fatal(err)
	}
	m, err := wire.Decode(wire.AppendMsgSequences(nil, id, 0, 0, body, seqs...))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkFindByID is BenchmarkPointRead's command without the network:
// find {_id: n} with limit 1 and singleBatch, as the driver's FindOne
// sends it, on 50,000 1 KB documents in cache.
func BenchmarkFindByID(b *testing.B) {
	c, dc := benchConn(b)
	const n = 50_000
	pad := make([]byte, 970)
	for i := 0; i < n; i += 1000 {
		docs := make([]bson.Raw, 1000)
		for j := range docs {
			docs[j], _ = bson.Marshal(bson.D{{Key: "_id", Value: i + j}, {Key: "pad", Value: pad}})
		}
		m := message(b, 1, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "bench"}},
			wire.Sequence{Identifier: "documents", Docs: docs})
		if !c.handle(m) {
			b.Fatal("insert failed")
		}
	}
	msgs := make([]*wire.Message, 1024)
	for i := range msgs {
		msgs[i] = message(b, int32(i), bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: (i * 7919) % n}}},
			{Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true}, {Key: "$db", Value: "bench"},
			{Key: "lsid", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}}})
	}
	dc.replies = 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !c.handle(msgs[i%len(msgs)]) {
			b.Fatal("find failed")
		}
	}
	b.StopTimer()
	if dc.replies != b.N {
		b.Fatalf("%d replies to %d finds", dc.replies, b.N)
	}
	if got := c.s.stats.docReturned.Load(); got < int64(b.N) {
		b.Fatalf("%d documents returned by %d finds", got, b.N)
	}
}
