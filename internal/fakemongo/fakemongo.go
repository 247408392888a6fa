// Package fakemongo is a tiny MongoDB wire-protocol server for tests: it
// listens on a loopback port and answers hello / isMaster (OP_QUERY and
// OP_MSG), ping, buildInfo and endSessions, with whatever extra hello
// fields a test gives (hosts, setName, ...); any other command fails with
// CommandNotFound. It records the commands it was sent. Tests import it
// from _test files only.
package fakemongo

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Wire protocol op codes.
const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013
)

// Server is a running fake server.
type Server struct {
	ln    net.Listener
	hello bson.D

	mu       sync.Mutex
	commands []string
	conns    map[net.Conn]bool
	wg       sync.WaitGroup
}

// Start listens on 127.0.0.1 on a free port and serves until the test
// ends. hello's fields are added to every hello / isMaster reply.
func Start(t testing.TB, hello bson.D) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake server: listen: %v", err)
	}
	s := &Server{ln: ln, hello: hello, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// Addr is the server's "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URI is a mongodb:// URI of the server with no options.
func (s *Server) URI() string { return "mongodb://" + s.Addr() + "/" }

// Commands returns the names of the commands received so far.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

func (s *Server) close() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r := bufio.NewReader(c)
	for {
		reqID, op, body, err := readMessage(r)
		if err != nil {
			return
		}
		var reply []byte
		switch op {
		case opQuery:
			doc, err := queryDocument(body)
			if err != nil {
				return
			}
			reply = replyMessage(reqID, s.answer(doc))
		case opMsg:
			doc, err := msgDocument(body)
			if err != nil {
				return
			}
			reply = msgMessage(reqID, s.answer(doc))
		default:
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// answer runs one command.
func (s *Server) answer(cmd bson.Raw) bson.D {
	elems, err := cmd.Elements()
	if err != nil || len(elems) == 0 {
		return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "empty command"}}
	}
	name := elems[0].Key()
	s.mu.Lock()
	s.commands = append(s.commands, name)
	s.mu.Unlock()
	switch name {
	case "hello", "isMaster", "ismaster":
		d := bson.D{
			{Key: "helloOk", Value: true},
			{Key: "ismaster", Value: true},
			{Key: "maxBsonObjectSize", Value: int32(16 << 20)},
			{Key: "maxMessageSizeBytes", Value: int32(48000000)},
			{Key: "maxWriteBatchSize", Value: int32(100000)},
			{Key: "localTime", Value: bson.NewDateTimeFromTime(time.Now())},
			{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
			{Key: "minWireVersion", Value: int32(0)},
			{Key: "maxWireVersion", Value: int32(9)},
			{Key: "readOnly", Value: false},
		}
		d = append(d, s.hello...)
		return append(d, bson.E{Key: "ok", Value: 1.0})
	case "ping", "endSessions":
		return bson.D{{Key: "ok", Value: 1.0}}
	case "buildInfo", "buildinfo":
		return bson.D{{Key: "version", Value: "4.4.29"}, {Key: "gitVersion", Value: "fakemongo"}, {Key: "ok", Value: 1.0}}
	}
	return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "no such command: '" + name + "'"},
		{Key: "code", Value: int32(59)}, {Key: "codeName", Value: "CommandNotFound"}}
}

// readMessage reads one message: its request id, op code and the bytes
// after the 16-byte header.
func readMessage(r io.Reader) (reqID int32, op int32, body []byte, err error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, nil, err
	}
	size := int32(binary.LittleEndian.Uint32(hdr[0:]))
	if size < 16 || size > 48000000 {
		return 0, 0, nil, fmt.Errorf("message size %d", size)
	}
	body = make([]byte, size-16)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, 0, nil, err
	}
	return int32(binary.LittleEndian.Uint32(hdr[4:])), int32(binary.LittleEndian.Uint32(hdr[12:])), body, nil
}

// queryDocument returns the query of an OP_QUERY: flags, a C string
// collection name, skip, limit, then the document.
func queryDocument(b []byte) (bson.Raw, error) {
	if len(b) < 4 {
		return nil, errors.New("short OP_QUERY")
	}
	b = b[4:]
	i := 0
	for i < len(b) && b[i] != 0 {
		i++
	}
	if i+9 > len(b) {
		return nil, errors.New("short OP_QUERY")
	}
	return readDocument(b[i+9:])
}

// msgDocument returns the body (section kind 0) of an OP_MSG.
func msgDocument(b []byte) (bson.Raw, error) {
	if len(b) < 5 {
		return nil, errors.New("short OP_MSG")
	}
	b = b[4:]
	for len(b) > 0 {
		kind := b[0]
		b = b[1:]
		if kind == 0 {
			return readDocument(b)
		}
		if len(b) < 4 {
			return nil, errors.New("short OP_MSG section")
		}
		n := int(binary.LittleEndian.Uint32(b))
		if n > len(b) {
			return nil, errors.New("short OP_MSG section")
		}
		b = b[n:]
	}
	return nil, errors.New("OP_MSG without a body")
}

func readDocument(b []byte) (bson.Raw, error) {
	if len(b) < 5 {
		return nil, errors.New("short document")
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < 5 || n > len(b) {
		return nil, errors.New("bad document length")
	}
	return bson.Raw(b[:n]), nil
}

func header(size int, responseTo int32, op int32) []byte {
	h := make([]byte, 16, size)
	binary.LittleEndian.PutUint32(h[0:], uint32(size))
	binary.LittleEndian.PutUint32(h[4:], 1)
	binary.LittleEndian.PutUint32(h[8:], uint32(responseTo))
	binary.LittleEndian.PutUint32(h[12:], uint32(op))
	return h
}

// replyMessage is an OP_REPLY with one document.
func replyMessage(responseTo int32, d bson.D) []byte {
	doc, _ := bson.Marshal(d)
	m := header(16+20+len(doc), responseTo, opReply)
	m = binary.LittleEndian.AppendUint32(m, 0) // responseFlags
	m = binary.LittleEndian.AppendUint64(m, 0) // cursorID
	m = binary.LittleEndian.AppendUint32(m, 0) // startingFrom
	m = binary.LittleEndian.AppendUint32(m, 1) // numberReturned
	return append(m, doc...)
}

// msgMessage is an OP_MSG with one body section.
func msgMessage(responseTo int32, d bson.D) []byte {
	doc, _ := bson.Marshal(d)
	m := header(16+4+1+len(doc), responseTo, opMsg)
	m = binary.LittleEndian.AppendUint32(m, 0) // flagBits
	m = append(m, 0)                           // section kind 0: body
	return append(m, doc...)
}

// Recorder is a driver dialer that records every address it is asked to
// dial. It dials loopback IP addresses only; any other address is recorded
// and refused without a packet sent.
type Recorder struct {
	mu    sync.Mutex
	addrs []string
}

// DialContext records address and dials it when it is a loopback IP.
func (r *Recorder) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	r.addrs = append(r.addrs, address)
	r.mu.Unlock()
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("recorder: refused to dial %s", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// Addrs returns the addresses dialled so far, in order.
func (r *Recorder) Addrs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.addrs...)
}

// Foreign returns the addresses dialled so far that are not addr.
func (r *Recorder) Foreign(addr string) []string {
	var out []string
	for _, a := range r.Addrs() {
		if a != addr {
			out = append(out, a)
		}
	}
	return out
}

// ReplicaSetHello is the extra hello of a server that says it belongs to
// a replica set whose only member is 10.1.2.3:27017, to tempt a driver into
// following it.
var ReplicaSetHello = bson.D{
	{Key: "isWritablePrimary", Value: true},
	{Key: "setName", Value: "rs0"},
	{Key: "setVersion", Value: int32(1)},
	{Key: "hosts", Value: bson.A{"10.1.2.3:27017"}},
	{Key: "primary", Value: "10.1.2.3:27017"},
	{Key: "me", Value: "10.1.2.3:27017"},
	{Key: "electionId", Value: bson.NewObjectID()},
}
