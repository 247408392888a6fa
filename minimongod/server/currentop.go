package server

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mlog"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
)

// currentOpArgs are the currentOp command's fields that are not a filter.
var currentOpArgs = map[string]bool{"currentOp": true, "$all": true, "$ownOps": true,
	"$truncateOps": true, "idleConnections": true, "allUsers": true, "idleSessions": true,
	"localOps": true, "truncateOps": true, "backtrace": true, "idleCursors": true}

// currentOpDocs returns the entries of every in-flight operation and, with
// idle, of connections that have none.
func (s *Server) currentOpDocs(idle bool) [][]byte {
	now := time.Now()
	var docs [][]byte
	busy := map[int64]bool{}
	s.ops.each(func(op *operation) {
		idx, d := bsoncore.AppendDocumentStart(nil)
		d = op.appendDoc(d, now)
		d, _ = bsoncore.AppendDocumentEnd(d, idx)
		docs = append(docs, d)
		busy[op.connID] = true
	})
	if !idle {
		return docs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if busy[c.id] {
			continue
		}
		idx, d := bsoncore.AppendDocumentStart(nil)
		d = appendIdleConn(d, c)
		d, _ = bsoncore.AppendDocumentEnd(d, idx)
		docs = append(docs, d)
	}
	return docs
}

// cmdCurrentOp answers {inprog: [...]}: in-flight operations matching the
// command's other fields as a filter ($all adds idle connections).
func cmdCurrentOp(c *clientConn, req *request, dst []byte) ([]byte, error) {
	idle := boolArg(req, "$all") || boolArg(req, "idleConnections")
	b := bsoncore.NewDocumentBuilder()
	elems, _ := req.body.Elements()
	for _, el := range elems {
		if !currentOpArgs[el.Key()] && !genericArgs[el.Key()] {
			b.AppendValue(el.Key(), el.Value())
		}
	}
	m, err := query.Compile(bson.Raw(b.Build()))
	if err != nil {
		return nil, err
	}
	a, d := bsoncore.AppendArrayElementStart(dst, "inprog")
	i := 0
	for _, doc := range c.s.currentOpDocs(idle) {
		if m.Match(bson.Raw(doc)) {
			d = bsoncore.AppendDocumentElement(d, itoa(i), doc)
			i++
		}
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return d, nil
}

// cmdKillOp interrupts the operation {op: opid}. As mongod, it answers
// "attempting to kill op" whether or not the operation exists.
func cmdKillOp(c *clientConn, req *request, dst []byte) ([]byte, error) {
	v, err := req.lookupErr("op")
	if err != nil {
		return nil, mongoerr.New(mongoerr.CodeNoSuchKey, "Missing expected field \"op\"")
	}
	id, ok := v.AsInt64OK()
	if !ok {
		f, fok := v.AsFloat64OK()
		if !fok {
			return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "Expected field \"op\" to have numeric type, but found %s", typeName(v.Type))
		}
		id = int64(f)
	}
	c.s.log.Info("COMMAND", 20482, c.ctxName(), "Going to kill op", mlog.A("opId", id))
	if !c.s.ops.kill(int32(id)) {
		c.s.log.Info("COMMAND", 20696, c.ctxName(), "Received interrupt request for unknown op", mlog.A("opId", id))
	}
	return bsoncore.AppendStringElement(dst, "info", "attempting to kill op"), nil
}

// currentOpStage returns the documents of a leading {$currentOp: {...}}
// stage, or ok false when the pipeline does not start with one.
func (c *clientConn) currentOpStage(req *request, stages []bsoncore.Value) (docs [][]byte, rest []bsoncore.Value, ok bool, err error) {
	if len(stages) == 0 || stages[0].Type != bsoncore.TypeEmbeddedDocument {
		return nil, stages, false, nil
	}
	v, lerr := stages[0].Document().LookupErr("$currentOp")
	if lerr != nil {
		return nil, stages, false, nil
	}
	if first := req.body.Index(0).Value(); req.db != "admin" || first.Type == bsoncore.TypeString {
		return nil, nil, true, mongoerr.New(mongoerr.CodeInvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
	}
	idle := false
	if v.Type == bsoncore.TypeEmbeddedDocument {
		if iv, err := v.Document().LookupErr("idleConnections"); err == nil && iv.Type == bsoncore.TypeBoolean {
			idle = iv.Boolean()
		}
	}
	return c.s.currentOpDocs(idle), stages[1:], true, nil
}
