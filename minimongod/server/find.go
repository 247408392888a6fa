package server

import (
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

const maxBatchBytes = 16 * 1024 * 1024

// serverCursor is an open cursor: an executor plus its projection.
type serverCursor struct {
	id        int64
	ns        string
	ex        *executor
	proj      *query.Projection
	lastUse   time.Time
	batchSize int64
	mu        sync.Mutex
}

type cursorRegistry struct {
	mu sync.Mutex
	m  map[int64]*serverCursor
}

func (r *cursorRegistry) init() { r.m = map[int64]*serverCursor{} }

func (r *cursorRegistry) add(sc *serverCursor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		sc.id = rand.Int64N(1<<62) + 1
		if _, dup := r.m[sc.id]; !dup {
			break
		}
	}
	r.m[sc.id] = sc
}

func (r *cursorRegistry) take(id int64) *serverCursor {
	r.mu.Lock()
	defer r.mu.Unlock()
	sc := r.m[id]
	return sc
}

func (r *cursorRegistry) remove(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[id]
	delete(r.m, id)
	return ok
}

func (r *cursorRegistry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// expire removes cursors idle longer than timeout.
func (r *cursorRegistry) expire(timeout time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, sc := range r.m {
		if sc.mu.TryLock() {
			if time.Since(sc.lastUse) > timeout {
				delete(r.m, id)
				n++
			}
			sc.mu.Unlock()
		}
	}
	return n
}

func cmdFind(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	filter, err := docArg(req, "filter")
	if err != nil {
		return nil, err
	}
	m, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	projSpec, err := docArg(req, "projection")
	if err != nil {
		return nil, err
	}
	proj, err := query.CompileProjection(projSpec)
	if err != nil {
		return nil, err
	}
	srt, err := sortArg(req, "sort")
	if err != nil {
		return nil, err
	}
	skip, err := intArg(req, "skip", 0)
	if err != nil {
		return nil, err
	}
	limit, err := intArg(req, "limit", 0)
	if err != nil {
		return nil, err
	}
	batchSize, err := intArg(req, "batchSize", 101)
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, mongoerr.New(51024, "BSON field 'skip' value must be >= 0, actual value '%d'", skip)
	}
	if batchSize < 0 {
		return nil, mongoerr.New(51024, "BSON field 'batchSize' value must be >= 0, actual value '%d'", batchSize)
	}
	if err := checkFindLimit(req); err != nil {
		return nil, err
	}
	single := boolArg(req, "singleBatch")
	ns := req.db + "." + name
	if name == profileCollection {
		sc := c.memoryCursor(ns, c.profileMatches(req.db, m, srt, skip, limit), proj)
		return c.batchReply(dst, "firstBatch", sc, batchSize, boolArg(req, "singleBatch"))
	}
	h, err := hintArg(req, coll)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return appendCursor(dst, "firstBatch", ns, 0, nil), nil
	}
	var out []byte
	err = c.storage(readTicket, func() error {
		ex := c.newExecutor(coll, m, srt, skip, limit, h)
		sc := &serverCursor{ns: ns, ex: ex, proj: proj, batchSize: batchSize}
		var err error
		out, err = c.batchReply(dst, "firstBatch", sc, batchSize, single)
		return err
	})
	return out, err
}

// checkFindLimit refuses a negative or NaN limit, as mongod 4.4's find.
func checkFindLimit(req *request) error {
	v, err := req.lookupErr("limit")
	if err != nil {
		return nil
	}
	f, ok := v.AsFloat64OK()
	if ok && (f < 0 || math.IsNaN(f)) {
		return mongoerr.New(mongoerr.CodeBadValue, "Limit value must be non-negative, but received: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return nil
}

// batchReply fills one batch of at most batchSize documents (<0: as many
// as fit in 16 MB) from sc and appends the cursor document, registering sc
// when more remains. A first batch of size 0 is empty with the cursor
// open, as in mongod; getMore's 0 is no limit (noBatchLimit).
func (c *clientConn) batchReply(dst []byte, key string, sc *serverCursor, batchSize int64, single bool) ([]byte, error) {
	cidx, d := bsoncore.AppendDocumentElementStart(dst, "cursor")
	aidx, d := bsoncore.AppendArrayElementStart(d, key)
	start := len(d)
	n := int64(0)
	exhausted := false
	for batchSize < 0 || n < batchSize {
		if len(d)-start >= maxBatchBytes {
			break
		}
		_, doc, err := sc.ex.next(c.sess)
		if err == wt.ErrNotFound {
			exhausted = true
			break
		}
		if err != nil {
			sc.ex.detach()
			return nil, err
		}
		if sc.proj == nil {
			d = bsoncore.AppendDocumentElement(d, itoa(int(n)), doc)
		} else {
			d = bsoncore.AppendHeader(d, bsoncore.TypeEmbeddedDocument, itoa(int(n)))
			d = sc.proj.Apply(d, bson.Raw(doc))
		}
		n++
	}
	if !exhausted && (batchSize < 0 || n == batchSize) && sc.ex.limit == 0 {
		exhausted = true
	}
	sc.ex.detach()
	c.s.stats.docReturned.Add(n)
	if c.op != nil {
		c.op.nreturned += n
	}
	d, _ = bsoncore.AppendArrayEnd(d, aidx)
	id := int64(0)
	if !exhausted && !single {
		if sc.id == 0 {
			sc.lastUse = time.Now()
			c.s.cursors.add(sc)
			c.s.stats.cursorsTotalOpened.Add(1)
		}
		id = sc.id
	} else if sc.id != 0 {
		c.s.cursors.remove(sc.id)
	}
	d = bsoncore.AppendInt64Element(d, "id", id)
	d = bsoncore.AppendStringElement(d, "ns", sc.ns)
	return bsoncore.AppendDocumentEnd(d, cidx)
}

// noBatchLimit is getMore's batch size for batchReply: 0 (or none) means
// as many documents as fit in a reply.
func noBatchLimit(batchSize int64) int64 {
	if batchSize <= 0 {
		return -1
	}
	return batchSize
}

// appendCursor appends a complete cursor document for docs held in memory.
func appendCursor(dst []byte, key, ns string, id int64, docs [][]byte) []byte {
	cidx, d := bsoncore.AppendDocumentElementStart(dst, "cursor")
	aidx, d := bsoncore.AppendArrayElementStart(d, key)
	for i, doc := range docs {
		d = bsoncore.AppendDocumentElement(d, itoa(i), doc)
	}
	d, _ = bsoncore.AppendArrayEnd(d, aidx)
	d = bsoncore.AppendInt64Element(d, "id", id)
	d = bsoncore.AppendStringElement(d, "ns", ns)
	d, _ = bsoncore.AppendDocumentEnd(d, cidx)
	return d
}

func cmdGetMore(c *clientConn, req *request, dst []byte) ([]byte, error) {
	v := req.body.Index(0).Value()
	id, ok := v.AsInt64OK()
	if !ok || v.Type != bsoncore.TypeInt64 {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'getMore.getMore' is the wrong type '%s', expected type 'long'", typeName(v.Type))
	}
	collV, err := req.lookupErr("collection")
	if err != nil || collV.Type != bsoncore.TypeString {
		return nil, mongoerr.New(40414, "BSON field 'getMore.collection' is missing but a required field")
	}
	batchSize, err := intArg(req, "batchSize", 0)
	if err != nil {
		return nil, err
	}
	batchSize = noBatchLimit(batchSize)
	sc := c.s.cursors.take(id)
	if sc == nil {
		return nil, mongoerr.New(mongoerr.CodeCursorNotFound, "cursor id %d not found", id)
	}
	ns := req.db + "." + collV.StringValue()
	if ns != sc.ns {
		return nil, mongoerr.New(mongoerr.CodeUnauthorized, "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", ns, sc.ns)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.lastUse = time.Now()
	sc.ex.op = c.op
	var out []byte
	err = c.storage(readTicket, func() error {
		if sc.ex.collectionGone(c.s.eng) {
			c.s.cursors.remove(id)
			return mongoerr.New(mongoerr.CodeQueryPlanKilled, "collection dropped between getMore calls")
		}
		var err error
		out, err = c.batchReply(dst, "nextBatch", sc, batchSize, false)
		return err
	})
	return out, err
}

func cmdKillCursors(c *clientConn, req *request, dst []byte) ([]byte, error) {
	v, err := req.lookupErr("cursors")
	if err != nil || v.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'killCursors.cursors' is missing but a required field")
	}
	ids, _ := v.Array().Values()
	var killed, notFound []int64
	for _, idv := range ids {
		id, _ := idv.AsInt64OK()
		if c.s.cursors.remove(id) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	appendIDs := func(d []byte, key string, ids []int64) []byte {
		a, d := bsoncore.AppendArrayElementStart(d, key)
		for i, id := range ids {
			d = bsoncore.AppendInt64Element(d, itoa(i), id)
		}
		d, _ = bsoncore.AppendArrayEnd(d, a)
		return d
	}
	dst = appendIDs(dst, "cursorsKilled", killed)
	dst = appendIDs(dst, "cursorsNotFound", notFound)
	dst = appendIDs(dst, "cursorsAlive", nil)
	dst = appendIDs(dst, "cursorsUnknown", nil)
	return dst, nil
}

func cmdCount(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	filter, err := docArg(req, "query")
	if err != nil {
		return nil, err
	}
	skip, err := intArg(req, "skip", 0)
	if err != nil {
		return nil, err
	}
	limit, err := intArg(req, "limit", 0)
	if err != nil {
		return nil, err
	}
	if limit < 0 {
		limit = -limit
	}
	if name == profileCollection {
		m, err := query.Compile(filter)
		if err != nil {
			return nil, err
		}
		return bsoncore.AppendInt64Element(dst, "n", int64(len(c.profileMatches(req.db, m, nil, skip, limit)))), nil
	}
	h, err := hintArg(req, coll)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return bsoncore.AppendInt32Element(dst, "n", 0), nil
	}
	n, err := c.countMatching(coll, filter, skip, limit, h)
	if err != nil {
		return nil, err
	}
	return bsoncore.AppendInt64Element(dst, "n", n), nil
}

// countMatching counts documents of coll matching filter, after skip and
// limit (0: none).
func (c *clientConn) countMatching(coll *storage.Collection, filter bson.Raw, skip, limit int64, h *queryHint) (int64, error) {
	var n int64
	if len(filter) <= 5 && h == nil {
		n = max(coll.Count()-skip, 0)
		if limit > 0 {
			n = min(n, limit)
		}
		return n, nil
	}
	m, err := query.Compile(filter)
	if err != nil {
		return 0, err
	}
	err = c.storage(readTicket, func() error {
		ex := c.newExecutor(coll, m, nil, skip, limit, h)
		defer ex.detach()
		return ex.each(c.sess, func(_, _ []byte) error { n++; return nil })
	})
	return n, err
}
