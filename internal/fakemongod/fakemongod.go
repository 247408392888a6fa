// Package fakemongod is a tiny MongoDB wire server for tests: it answers
// the handshake (OP_QUERY and OP_MSG), the commands wtd sends, and
// whatever a test adds, so tests can play servers that are not mongod:
// one without WiredTiger statistics, one that advertises other hosts.
// Tests import it from _test files only.
package fakemongod

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Wire opcodes.
const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013
)

// Handler answers one command; cmd is the command document (with document
// sequences folded in as arrays). A nil reply means "not handled".
type Handler func(cmd bson.Raw) bson.D

// RawHandler answers one command with a whole reply document (its ok
// included), sent as it is.
type RawHandler func(cmd bson.Raw) bson.Raw

// Server is a fake listening on 127.0.0.1.
type Server struct {
	ln       net.Listener
	mu       sync.Mutex
	handlers map[string]Handler
	raw      map[string]RawHandler
	// Hello are extra fields of the hello reply (e.g. hosts, setName).
	hello    bson.D
	commands []string
	conns    sync.WaitGroup
	closed   atomic.Bool
}

// Start listens on a free loopback port and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, handlers: map[string]Handler{}, raw: map[string]RawHandler{}}
	s.defaults()
	go s.accept()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URI is a mongodb:// URI of the server.
func (s *Server) URI() string { return "mongodb://" + s.Addr() }

// Handle sets the handler of a command (lower-cased name).
func (s *Server) Handle(name string, h Handler) {
	s.mu.Lock()
	s.handlers[strings.ToLower(name)] = h
	delete(s.raw, strings.ToLower(name))
	s.mu.Unlock()
}

// SetHello adds fields to the hello / isMaster reply.
func (s *Server) SetHello(fields bson.D) {
	s.mu.Lock()
	s.hello = fields
	s.mu.Unlock()
}

// Commands returns the names of the commands received so far, in order.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Close stops listening and waits for the connections to end.
func (s *Server) Close() error {
	s.closed.Store(true)
	err := s.ln.Close()
	s.conns.Wait()
	return err
}

func (s *Server) defaults() {
	ok := func(fields ...bson.E) Handler {
		return func(bson.Raw) bson.D { return append(bson.D(fields), bson.E{Key: "ok", Value: 1.0}) }
	}
	hello := func(bson.Raw) bson.D {
		s.mu.Lock()
		extra := s.hello
		s.mu.Unlock()
		d := bson.D{{Key: "ismaster", Value: true}, {Key: "isWritablePrimary", Value: true},
			{Key: "maxBsonObjectSize", Value: int32(16 << 20)}, {Key: "maxMessageSizeBytes", Value: int32(48_000_000)},
			{Key: "maxWriteBatchSize", Value: int32(100000)}, {Key: "minWireVersion", Value: int32(0)},
			{Key: "maxWireVersion", Value: int32(13)}, {Key: "connectionId", Value: int32(1)}}
		d = append(d, extra...)
		return append(d, bson.E{Key: "ok", Value: 1.0})
	}
	for _, n := range []string{"hello", "ismaster"} {
		s.handlers[n] = hello
	}
	s.handlers["ping"] = ok()
	s.handlers["endsessions"] = ok()
	s.handlers["buildinfo"] = ok(bson.E{Key: "version", Value: "7.0.0-fake"}, bson.E{Key: "gitVersion", Value: "fakefakefake"})
	s.handlers["getcmdlineopts"] = ok(bson.E{Key: "argv", Value: bson.A{"fakemongod"}}, bson.E{Key: "parsed", Value: bson.D{}})
	s.handlers["getparameter"] = ok()
	s.handlers["serverstatus"] = ok(bson.E{Key: "host", Value: "fake"}, bson.E{Key: "version", Value: "7.0.0-fake"},
		bson.E{Key: "uptime", Value: 10.0},
		bson.E{Key: "opcounters", Value: bson.D{{Key: "insert", Value: int64(0)}, {Key: "query", Value: int64(0)}, {Key: "update", Value: int64(0)}}},
		bson.E{Key: "connections", Value: bson.D{{Key: "current", Value: int32(1)}}})
	s.handlers["find"] = func(cmd bson.Raw) bson.D {
		coll, _ := cmd.Lookup("find").StringValueOK()
		db, _ := cmd.Lookup("$db").StringValueOK()
		batch := bson.A{}
		if id, err := cmd.LookupErr("filter", "_id"); err == nil {
			batch = append(batch, bson.D{{Key: "_id", Value: id}})
		}
		return bson.D{{Key: "cursor", Value: bson.D{{Key: "firstBatch", Value: batch}, {Key: "id", Value: int64(0)},
			{Key: "ns", Value: db + "." + coll}}}, {Key: "ok", Value: 1.0}}
	}
	s.handlers["insert"] = func(cmd bson.Raw) bson.D {
		docs, _ := cmd.Lookup("documents").ArrayOK()
		vals, _ := docs.Values()
		return bson.D{{Key: "n", Value: int32(len(vals))}, {Key: "ok", Value: 1.0}}
	}
	s.handlers["collstats"] = func(cmd bson.Raw) bson.D {
		coll, _ := cmd.Lookup("collStats").StringValueOK()
		return bson.D{{Key: "ns", Value: coll}, {Key: "count", Value: int32(0)}, {Key: "size", Value: int32(0)}, {Key: "ok", Value: 1.0}}
	}
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

func (s *Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for !s.closed.Load() {
		var hdr [16]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		size := int(binary.LittleEndian.Uint32(hdr[0:]))
		reqID := binary.LittleEndian.Uint32(hdr[4:])
		op := binary.LittleEndian.Uint32(hdr[12:])
		if size < 16 || size > 48_000_000 {
			return
		}
		body := make([]byte, size-16)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var reply []byte
		var err error
		switch op {
		case opQuery:
			reply, err = s.query(body, reqID)
		case opMsg:
			reply, err = s.msg(body, reqID)
		default:
			return
		}
		if err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// query answers an OP_QUERY (the legacy handshake) with an OP_REPLY.
func (s *Server) query(body []byte, reqID uint32) ([]byte, error) {
	if len(body) < 4 {
		return nil, errors.New("short OP_QUERY")
	}
	rest := body[4:]
	i := indexByte(rest, 0)
	if i < 0 || len(rest) < i+9 {
		return nil, errors.New("bad OP_QUERY")
	}
	doc := bson.Raw(rest[i+9:])
	out, err := s.reply(doc)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 16+20, 36+len(out))
	binary.LittleEndian.PutUint32(msg[4:], reqID+1)
	binary.LittleEndian.PutUint32(msg[8:], reqID)
	binary.LittleEndian.PutUint32(msg[12:], opReply)
	binary.LittleEndian.PutUint32(msg[32:], 1) // numberReturned
	msg = append(msg, out...)
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	return msg, nil
}

// msg answers an OP_MSG.
func (s *Server) msg(body []byte, reqID uint32) ([]byte, error) {
	if len(body) < 5 {
		return nil, errors.New("short OP_MSG")
	}
	var cmd bson.Raw
	seqs := bson.D{}
	for p := body[4:]; len(p) > 0; {
		kind := p[0]
		p = p[1:]
		if len(p) < 4 {
			break
		}
		n := int(binary.LittleEndian.Uint32(p))
		if n > len(p) || n < 4 {
			return nil, errors.New("bad section")
		}
		switch kind {
		case 0:
			cmd = bson.Raw(p[:n])
		case 1:
			sec := p[4:n]
			j := indexByte(sec, 0)
			if j < 0 {
				return nil, errors.New("bad sequence")
			}
			name := string(sec[:j])
			arr := bson.A{}
			for d := sec[j+1:]; len(d) >= 4; {
				m := int(binary.LittleEndian.Uint32(d))
				if m > len(d) || m < 5 {
					break
				}
				arr = append(arr, bson.Raw(d[:m]))
				d = d[m:]
			}
			seqs = append(seqs, bson.E{Key: name, Value: arr})
		}
		p = p[n:]
	}
	if len(seqs) > 0 {
		var d bson.D
		if err := bson.Unmarshal(cmd, &d); err == nil {
			merged, err := bson.Marshal(append(d, seqs...))
			if err == nil {
				cmd = merged
			}
		}
	}
	out, err := s.reply(cmd)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 16+4+1, 21+len(out))
	binary.LittleEndian.PutUint32(msg[4:], reqID+1)
	binary.LittleEndian.PutUint32(msg[8:], reqID)
	binary.LittleEndian.PutUint32(msg[12:], opMsg)
	msg = append(msg, out...)
	binary.LittleEndian.PutUint32(msg[0:], uint32(len(msg)))
	return msg, nil
}

// reply returns the reply document to cmd: a raw handler's, else answer's.
func (s *Server) reply(cmd bson.Raw) ([]byte, error) {
	if elems, err := cmd.Elements(); err == nil && len(elems) > 0 {
		s.mu.Lock()
		h := s.raw[strings.ToLower(elems[0].Key())]
		if h != nil {
			s.commands = append(s.commands, elems[0].Key())
		}
		s.mu.Unlock()
		if h != nil {
			return h(cmd), nil
		}
	}
	return bson.Marshal(s.answer(cmd))
}

// answer runs the handler of cmd's first key.
func (s *Server) answer(cmd bson.Raw) bson.D {
	elems, err := cmd.Elements()
	if err != nil || len(elems) == 0 {
		return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: "empty command"}, {Key: "code", Value: int32(9)}}
	}
	name := elems[0].Key()
	s.mu.Lock()
	s.commands = append(s.commands, name)
	h := s.handlers[strings.ToLower(name)]
	s.mu.Unlock()
	if h != nil {
		if d := h(cmd); d != nil {
			return d
		}
	}
	return bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: fmt.Sprintf("no such command: '%s'", name)},
		{Key: "code", Value: int32(59)}, {Key: "codeName", Value: "CommandNotFound"}}
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
