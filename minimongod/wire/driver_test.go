package wire

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// seenMsg records what the fake server received.
type seenMsg struct {
	OpCode         int32
	DB             string
	Command        string
	NumberToReturn int32
}

// fakeServer answers just enough of the protocol for the Go driver to
// connect and ping, recording each request.
type fakeServer struct {
	hello, ok bson.Raw
	mu        sync.Mutex
	seen      []seenMsg
}

// helloReply is the document sent in reply to isMaster/hello.
func helloReply(t testing.TB) bson.Raw {
	return doc(t, bson.D{
		{Key: "ismaster", Value: true}, {Key: "helloOk", Value: true},
		{Key: "maxBsonObjectSize", Value: int32(MaxBSONObjectSize)},
		{Key: "maxMessageSizeBytes", Value: int32(DefaultMaxMessageSize)},
		{Key: "maxWriteBatchSize", Value: int32(100000)},
		{Key: "localTime", Value: bson.DateTime(time.Now().UnixMilli())},
		{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		{Key: "minWireVersion", Value: int32(0)}, {Key: "maxWireVersion", Value: int32(21)},
		{Key: "ok", Value: 1.0},
	})
}

// serve handles one connection until it fails or closes.
func (s *fakeServer) serve(c net.Conn) {
	defer c.Close()
	var buf, out []byte
	for {
		m, nb, err := ReadMessage(c, buf, 0)
		buf = nb
		if err != nil {
			return
		}
		out = s.reply(out[:0], m)
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// reply records m and appends the response to it, if any, to dst.
func (s *fakeServer) reply(dst []byte, m *Message) []byte {
	body, _ := m.Command()
	name := body.Index(0).Key()
	s.mu.Lock()
	s.seen = append(s.seen, seenMsg{m.Header.OpCode, m.DB(), name, m.NumberToReturn})
	s.mu.Unlock()
	if m.Header.OpCode == OpQuery {
		return AppendReply(dst, 1, m.Header.RequestID, 0, 0, 0, s.hello)
	}
	if m.MoreToCome() {
		return dst
	}
	resp := s.ok
	if name == "hello" || name == "isMaster" || name == "ismaster" {
		resp = s.hello
	}
	return AppendMsg(dst, 1, m.Header.RequestID, 0, resp)
}

func TestGoDriverHandshakeAndPing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("listen: %v", err)
	}
	defer ln.Close()
	s := &fakeServer{hello: helloReply(t), ok: doc(t, bson.D{{Key: "ok", Value: 1.0}})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uri := "mongodb://" + ln.Addr().String() + "/?directConnection=true&serverSelectionTimeoutMS=5000"
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer client.Disconnect(ctx)
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !contains(s.seen, seenMsg{OpQuery, "admin", "isMaster", -1}) {
		t.Errorf("no legacy OP_QUERY isMaster on admin.$cmd with numberToReturn -1 in %+v", s.seen)
	}
	if !contains(s.seen, seenMsg{OpMsg, "admin", "ping", 0}) {
		t.Errorf("no OP_MSG ping on admin in %+v", s.seen)
	}
}

// contains reports whether seen has want.
func contains(seen []seenMsg, want seenMsg) bool {
	for _, s := range seen {
		if s == want {
			return true
		}
	}
	return false
}
