package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mlog"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/rawbson"
	"wtd/minimongod/storage"
	"wtd/minimongod/wire"
)

// clientConn is one client connection, served by one goroutine with its own
// storage session.
type clientConn struct {
	s    *Server
	nc   net.Conn
	id   int64
	br   *bufio.Reader
	sess *storage.Session

	rbuf  []byte // message read buffer
	out   []byte // reply document buffer
	frame []byte // framed reply
	reqID int32
	// client metadata from the handshake
	remote string
	name   string // see ctxName
	// op is the operation in flight, while run runs.
	op *operation
	// req is the request being served, reused from one to the next.
	req request
}

func (s *Server) newClientConn(nc net.Conn) *clientConn {
	if s.closing.Load() {
		return nil
	}
	s.mu.Lock()
	if len(s.conns) >= s.opts.MaxConns {
		n := len(s.conns)
		s.mu.Unlock()
		s.stats.rejectedConns.Add(1)
		s.log.Info("NETWORK", 22942, "listener", "Connection refused because there are too many open connections",
			mlog.A("remote", nc.RemoteAddr().String()), mlog.A("connectionCount", n))
		return nil
	}
	sess, err := s.eng.NewSession()
	if err != nil {
		s.mu.Unlock()
		s.log.Error("NETWORK", 22988, "listener", "cannot open a session for a new connection", mlog.A("error", err.Error()))
		return nil
	}
	c := &clientConn{s: s, nc: nc, id: s.connSeq.Add(1), br: getReader(nc), sess: sess, remote: nc.RemoteAddr().String()}
	c.name = "conn" + strconv.FormatInt(c.id, 10)
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	s.conns[c] = struct{}{}
	n := len(s.conns)
	s.mu.Unlock()
	s.stats.totalConns.Add(1)
	s.log.Info("NETWORK", 22943, "listener", "Connection accepted", mlog.A("remote", c.remote), mlog.A("connectionId", c.id), mlog.A("connectionCount", n))
	return c
}

// ctxName is the connection's name in the log and currentOp: conn<id>.
func (c *clientConn) ctxName() string { return c.name }

func (c *clientConn) serve() {
	defer c.close()
	for {
		msg, buf, err := wire.ReadMessage(c.br, bufferFor(c.br, c.rbuf), wire.DefaultMaxMessageSize)
		c.rbuf = buf
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !c.s.closing.Load() {
				c.s.log.Info("NETWORK", 22989, c.ctxName(), "Error receiving request from client. Ending connection from remote", mlog.A("error", err.Error()), mlog.A("remote", c.remote))
			}
			return
		}
		if c.s.closing.Load() {
			return
		}
		c.s.inflight.Add(1)
		c.s.stats.bytesIn.Add(int64(msg.Header.MessageLength))
		c.s.stats.numRequests.Add(1)
		ok := c.handle(msg)
		c.rbuf, c.out, c.frame = trimToPool(c.rbuf), trimToPool(c.out), trimToPool(c.frame)
		c.s.inflight.Done()
		if !ok {
			return
		}
	}
}

func (c *clientConn) close() {
	c.nc.Close()
	c.sess.Close()
	putReader(c.br)
	c.br = nil
	c.s.mu.Lock()
	delete(c.s.conns, c)
	n := len(c.s.conns)
	c.s.mu.Unlock()
	c.s.log.Info("NETWORK", 22944, c.ctxName(), "Connection ended", mlog.A("remote", c.remote), mlog.A("connectionId", c.id), mlog.A("connectionCount", n))
}

// handle runs one request and writes its reply; false closes the connection.
func (c *clientConn) handle(msg *wire.Message) bool {
	switch msg.Header.OpCode {
	case wire.OpMsg:
		req := c.newRequest(msg.DB(), bsoncore.Document(msg.Body), msg.Sequences, false)
		var doc []byte
		closeAfter := false
		if _, err := req.lookupErr("$db"); err != nil {
			doc = c.errorReply(mongoerr.New(mongoerr.CodeNoDB, "OP_MSG requests require a $db argument"))
		} else {
			doc, closeAfter = c.run(req)
		}
		if msg.MoreToCome() || doc == nil {
			// No reply: moreToCome, or a command that closes the
			// connection instead of answering (shutdown, as mongod).
			return !closeAfter && doc != nil
		}
		c.reqID++
		c.frame = wire.AppendMsg(replyBuffer(c.frame), c.reqID, msg.Header.RequestID, 0, doc)
		return c.write() && !closeAfter
	case wire.OpQuery:
		req := c.newRequest(msg.DB(), bsoncore.Document(msg.Query), nil, true)
		if inner, err := bsoncore.Document(msg.Query).LookupErr("$query"); err == nil && inner.Type == bsoncore.TypeEmbeddedDocument {
			req.body = inner.Document()
		}
		doc, closeAfter := c.run(req)
		if doc == nil {
			return false
		}
		c.reqID++
		c.frame = wire.AppendReply(replyBuffer(c.frame), c.reqID, msg.Header.RequestID, 8 /* AwaitCapable */, 0, 0, doc)
		return c.write() && !closeAfter
	default:
		c.s.log.Warning("NETWORK", 4700, c.ctxName(), "unsupported opcode; closing the connection", mlog.A("opCode", msg.Header.OpCode))
		return false
	}
}

func (c *clientConn) write() bool {
	c.s.stats.bytesOut.Add(int64(len(c.frame)))
	if _, err := c.nc.Write(c.frame); err != nil {
		return false
	}
	return true
}

// request is one command.
type request struct {
	db     string
	name   string
	body   bsoncore.Document
	seqs   []wire.Sequence
	legacy bool // OP_QUERY

	// args are the body's elements, read once by the first lookupErr.
	args    []reqArg
	argsBuf [16]reqArg
	indexed bool
}

// newRequest returns the connection's request, reset for a new command.
func (c *clientConn) newRequest(db string, body bsoncore.Document, seqs []wire.Sequence, legacy bool) *request {
	c.req = request{db: db, body: body, seqs: seqs, legacy: legacy}
	return &c.req
}

// reqArg is one element of a command body.
type reqArg struct {
	key []byte
	val bsoncore.Value
}

// lookupErr returns the body's first element named name, as
// bsoncore.Document.LookupErr does, reading the body only once per request
// however many arguments a command looks up.
func (r *request) lookupErr(name string) (bsoncore.Value, error) {
	if !r.indexed {
		r.indexed = true
		r.args = r.argsBuf[:0]
		it := rawbson.NewIter(r.body)
		for {
			k, v, ok := it.Next()
			if !ok {
				break
			}
			r.args = append(r.args, reqArg{key: k, val: v})
		}
	}
	for i := range r.args {
		if string(r.args[i].key) == name {
			return r.args[i].val, nil
		}
	}
	return bsoncore.Value{}, bsoncore.ErrElementNotFound
}

// run dispatches a command and returns the reply document.
func (c *clientConn) run(req *request) (doc []byte, closeAfter bool) {
	first, err := req.body.IndexErr(0)
	if err != nil {
		return c.errorReply(mongoerr.New(mongoerr.CodeFailedToParse, "Empty command object")), false
	}
	// The command's name is the map's own string: no copy per request.
	cmd, ok := commands[string(first.KeyBytes())]
	req.name = cmd.name
	if !ok {
		req.name = first.Key()
	}
	if !ok || (cmd.testOnly && !c.s.params.testCommands()) {
		c.s.stats.commandFailed.Add(1)
		return c.errorReply(mongoerr.New(mongoerr.CodeCommandNotFound, "no such command: '%s'", req.name)), false
	}
	if err := checkTransactionFields(req); err != nil {
		c.s.stats.commandFailed.Add(1)
		return c.errorReply(err), false
	}
	if err := checkDBName(req.db); err != nil {
		c.s.stats.commandFailed.Add(1)
		return c.errorReply(err), false
	}
	if cmd.adminOnly && req.db != "admin" {
		return c.errorReply(mongoerr.New(13, "%s may only be run against the admin database.", req.name)), false
	}
	if cmd.counter != nil {
		cmd.counter(&c.s.stats).Add(1)
	} else {
		c.s.stats.opCommand.Add(1)
	}
	start := time.Now()
	c.op = c.s.ops.begin(&operation{desc: c.ctxName(), connID: c.id, client: c.remote,
		opType: opTypeOf(req.name), ns: nsOf(req), command: req.body})
	idx, out := bsoncore.AppendDocumentStart(replyBuffer(c.out))
	out, err = c.runCommand(cmd, req, out)
	c.s.ops.end(c.op)
	op := c.op
	c.op = nil
	if err != nil {
		if errors.Is(err, errCloseConnection) {
			return nil, true
		}
		c.out = out
		doc = c.errorReply(err)
		c.observe(req, op, time.Since(start), len(doc), err)
		return doc, false
	}
	out = bsoncore.AppendDoubleElement(out, "ok", 1)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	c.out = out
	dur := time.Since(start)
	c.s.stats.observeLatency(cmd.latencyClass, dur)
	c.observe(req, op, dur, len(out), nil)
	return out, false
}

var errCloseConnection = errors.New("close connection")

// opTypeOf returns currentOp's op for a command.
func opTypeOf(name string) string {
	if t, ok := opTypes[name]; ok {
		return t
	}
	return "command"
}

// nsOf returns the namespace a command works on: db.collection when the
// command names one, db.$cmd otherwise.
func nsOf(req *request) string {
	if v := req.body.Index(0).Value(); v.Type == bsoncore.TypeString && v.StringValue() != "" {
		return req.db + "." + v.StringValue()
	}
	return req.db + ".$cmd"
}

// storage runs f as storage work: holding a ticket of kind (waiting in
// the queue for one) and the engine's shared lock. It must not nest.
func (c *clientConn) storage(kind ticketKind, f func() error) error {
	if err := c.s.acquireTicket(c.op, kind); err != nil {
		return err
	}
	c.sess.Lock()
	defer c.unlockStorage(kind)
	return f()
}

func (c *clientConn) unlockStorage(kind ticketKind) {
	c.sess.Unlock()
	c.s.releaseTicket(c.op, kind)
}

// lockStorage takes a ticket of kind and then the engine's shared lock (in
// that order, so that no operation waits for a ticket while it holds the
// lock a catalog change waits for) and returns their release.
func (c *clientConn) lockStorage(kind ticketKind) (func(), error) {
	op := c.op
	if err := c.s.acquireTicket(op, kind); err != nil {
		return nil, err
	}
	c.sess.Lock()
	return func() {
		c.sess.Unlock()
		c.s.releaseTicket(op, kind)
	}, nil
}

// takeTicket takes a ticket of kind for op and returns its release.
func (s *Server) takeTicket(op *operation, k ticketKind) (func(), error) {
	if err := s.acquireTicket(op, k); err != nil {
		return nil, err
	}
	return func() { s.releaseTicket(op, k) }, nil
}

// acquireTicket takes a ticket of kind k for op; releaseTicket gives it
// back. An operation that already holds one of that kind takes it again
// without queueing (a write statement's scan and its transactions).
func (s *Server) acquireTicket(op *operation, k ticketKind) error {
	if op.held[k] > 0 {
		op.held[k]++
		return nil
	}
	if err := op.interrupted(); err != nil {
		return err
	}
	if err := s.exec.holder(k).acquire(op.killCh, !op.admitted, op.queuedFor(k)); err != nil {
		return err
	}
	op.admitted = true
	op.held[k] = 1
	op.ticketAt[k] = time.Now()
	return nil
}

func (s *Server) releaseTicket(op *operation, k ticketKind) {
	op.held[k]--
	if op.held[k] == 0 {
		s.exec.holder(k).release(time.Since(op.ticketAt[k]))
	}
}

// errorReply builds {ok: 0, errmsg, code, codeName}.
func (c *clientConn) errorReply(err error) []byte {
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		me = mongoerr.New(mongoerr.CodeInternalError, "%s", err.Error())
	}
	idx, out := bsoncore.AppendDocumentStart(replyBuffer(c.out))
	out = bsoncore.AppendDoubleElement(out, "ok", 0)
	out = bsoncore.AppendStringElement(out, "errmsg", me.Msg)
	out = bsoncore.AppendInt32Element(out, "code", me.Code)
	out = bsoncore.AppendStringElement(out, "codeName", me.CodeName)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	c.out = out
	return out
}
