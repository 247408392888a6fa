package server

import (
	"io"
	"net"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mlog"
	"wtd/minimongod/options"
)

// discardConn is a client connection that takes replies and sends nothing:
// commands run through handle or run without a network.
type discardConn struct {
	net.Conn
	replies int
}

func (d *discardConn) Write(p []byte) (int, error) { d.replies++; return len(p), nil }
func (d *discardConn) Read([]byte) (int, error)    { return 0, io.EOF }
func (d *discardConn) Close() error                { return nil }
func (d *discardConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}

// openTestServer opens minimongod with New, as the command does (lock
// file, WiredTiger through the storage package, listeners), on a dbpath in
// t.TempDir() and an ephemeral loopback port (--port 0) no one connects
// to, with args after --port, --bind_ip and --dbpath. Serve is not called:
// tests run commands on connections of their own (newTestConn). The server
// shuts down cleanly when the test ends. WiredTiger's message callback is
// process-wide, so tests that open one do not run in parallel.
func openTestServer(t testing.TB, args ...string) *Server {
	t.Helper()
	full := append([]string{"--port", "0", "--bind_ip", "127.0.0.1", "--dbpath", t.TempDir()}, args...)
	opts, err := options.Parse(full, 8<<30)
	if err != nil {
		t.Fatalf("parse %v: %v", full, err)
	}
	s, err := New(opts, nil, mlog.New(io.Discard), 8<<30)
	if err != nil {
		t.Fatalf("open minimongod on %s: %v", opts.DBPath, err)
	}
	t.Cleanup(func() {
		if err := s.shutdown(); err != nil {
			t.Errorf("shut down minimongod: %v", err)
		}
	})
	return s
}

// testConn is a client connection of an in-process server that runs
// commands without a network.
type testConn struct {
	t testing.TB
	c *clientConn
}

// newTestConn opens a connection to s, closed when the test ends (before
// the server shuts down).
func newTestConn(t testing.TB, s *Server) *testConn {
	t.Helper()
	c := s.newClientConn(&discardConn{})
	if c == nil {
		t.Fatal("minimongod refused a connection")
	}
	t.Cleanup(c.close)
	return &testConn{t: t, c: c}
}

// run runs cmd on db as an OP_MSG command and returns a copy of the reply,
// whether it says ok: 1 or not.
func (tc *testConn) run(db string, cmd bson.D) bson.Raw {
	tc.t.Helper()
	body, err := bson.Marshal(cmd)
	if err != nil {
		tc.t.Fatalf("marshal %v: %v", cmd, err)
	}
	doc, _ := tc.c.run(tc.c.newRequest(db, bsoncore.Document(body), nil, false))
	return bson.Raw(append([]byte(nil), doc...))
}

// must runs cmd and fails the test unless it succeeds.
func (tc *testConn) must(db string, cmd bson.D) bson.Raw {
	tc.t.Helper()
	reply := tc.run(db, cmd)
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		tc.t.Fatalf("%v: %v", cmd, reply)
	}
	return reply
}

// fails runs cmd, which must fail, and returns its code and errmsg.
func (tc *testConn) fails(db string, cmd bson.D) (int32, string) {
	tc.t.Helper()
	reply := tc.run(db, cmd)
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 0 {
		tc.t.Fatalf("%v succeeded, want an error: %v", cmd, reply)
	}
	code, _ := reply.Lookup("code").Int32OK()
	msg, _ := reply.Lookup("errmsg").StringValueOK()
	return code, msg
}

// cursorBatch is one reply's cursor: its documents' _ids and the id left.
type cursorBatch struct {
	ids []int
	id  int64
}

// readBatch reads the cursor document of a find or getMore reply.
func readBatch(t *testing.T, reply bson.Raw, key string) cursorBatch {
	t.Helper()
	arr, ok := lookupPath(t, reply, "cursor."+key).ArrayOK()
	if !ok {
		t.Fatalf("cursor.%s is not an array: %v", key, reply)
	}
	vals, _ := arr.Values()
	b := cursorBatch{id: intAt(t, reply, "cursor.id")}
	for _, v := range vals {
		doc := v.Document()
		b.ids = append(b.ids, int(intAt(t, doc, "_id")))
	}
	return b
}

// lookupPath returns the value at a dotted path of doc ("a.0.b").
func lookupPath(t testing.TB, doc bson.Raw, path string) bson.RawValue {
	t.Helper()
	v, err := doc.LookupErr(splitPath(path)...)
	if err != nil {
		t.Fatalf("no %s in %v", path, doc)
	}
	return v
}

func splitPath(path string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			out = append(out, path[start:i])
			start = i + 1
		}
	}
	return out
}

// intAt returns the number at path as an int64.
func intAt(t testing.TB, doc bson.Raw, path string) int64 {
	t.Helper()
	v := lookupPath(t, doc, path)
	if n, ok := v.AsInt64OK(); ok {
		return n
	}
	if f, ok := v.DoubleOK(); ok {
		return int64(f)
	}
	t.Fatalf("%s = %v, not a number", path, v)
	return 0
}
