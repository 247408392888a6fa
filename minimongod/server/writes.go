package server

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

// writeError is one entry of a write command's writeErrors.
type writeError struct {
	index int
	err   error
}

func appendWriteErrors(dst []byte, errs []writeError) []byte {
	if len(errs) == 0 {
		return dst
	}
	a, d := bsoncore.AppendArrayElementStart(dst, "writeErrors")
	for i, we := range errs {
		var me *mongoerr.Error
		if !errors.As(we.err, &me) {
			me = mongoerr.New(mongoerr.CodeInternalError, "%s", we.err.Error())
		}
		e, dd := bsoncore.AppendDocumentElementStart(d, itoa(i))
		dd = bsoncore.AppendInt32Element(dd, "index", int32(we.index))
		dd = bsoncore.AppendInt32Element(dd, "code", me.Code)
		var dup *storage.DuplicateKeyError
		if errors.As(we.err, &dup) {
			dd = bsoncore.AppendDocumentElement(dd, "keyPattern", dup.KeyPattern)
			dd = bsoncore.AppendDocumentElement(dd, "keyValue", dup.KeyValue)
		}
		dd = bsoncore.AppendStringElement(dd, "errmsg", me.Msg)
		d, _ = bsoncore.AppendDocumentEnd(dd, e)
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return d
}

// orderedArg is the write commands' "ordered" (default true).
func orderedArg(req *request) bool {
	if _, err := req.lookupErr("ordered"); err != nil {
		return true
	}
	return boolArg(req, "ordered")
}

// withTxn runs f in a transaction and commits it, retrying on write
// conflicts as mongod does.
func (c *clientConn) withTxn(sync bool, f func() error) error {
	for attempt := 0; ; attempt++ {
		if err := c.sess.Begin(); err != nil {
			return err
		}
		err := f()
		if err == nil {
			if err = c.sess.Commit(sync); err == nil {
				return nil
			}
		} else {
			c.sess.Rollback()
		}
		if !wt.IsRollback(err) || attempt >= 1000 {
			return err
		}
		c.s.stats.writeConflicts.Add(1)
		time.Sleep(time.Duration(min(attempt, 10)) * 100 * time.Microsecond)
	}
}

// writeTxn runs f in a transaction (withTxn) as storage work with a write
// ticket: one ticket per storage transaction, as mongod holds its ticket
// for the time it holds the global lock.
func (c *clientConn) writeTxn(sync bool, f func() error) error {
	return c.storage(writeTicket, func() error { return c.withTxn(sync, f) })
}

// isInterrupted reports whether err is Interrupted (killOp).
func isInterrupted(err error) bool {
	var me *mongoerr.Error
	return errors.As(err, &me) && me.Code == mongoerr.CodeInterrupted
}

// errCollectionGone stops a multi-document write whose collection was
// dropped between two of its transactions.
var errCollectionGone = errors.New("collection dropped")

// prepareInsert gives doc an _id (an ObjectId first, as mongod does) and
// checks it, in the order of mongod's fixDocumentForInsert: size, nesting,
// then the top-level fields.
func prepareInsert(doc bson.Raw) (bson.Raw, error) {
	if err := checkInsertSize(doc); err != nil {
		return nil, err
	}
	if err := checkInsertDepth(doc); err != nil {
		return nil, err
	}
	hasID, err := checkTopLevelFields(doc)
	if err != nil {
		return nil, err
	}
	if hasID {
		return doc, nil
	}
	out := make([]byte, 0, len(doc)+17)
	idx, out := bsoncore.AppendDocumentStart(out)
	out = bsoncore.AppendObjectIDElement(out, "_id", bson.NewObjectID())
	out = append(out, doc[4:len(doc)-1]...)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, checkInsertSize(out)
}

func cmdInsert(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	docs, err := docsArg(req, "documents")
	if err != nil {
		return nil, err
	}
	wc, err := writeConcernArg(req)
	if err != nil {
		return nil, err
	}
	ordered, sync := orderedArg(req), wc.sync()
	coll, err := c.ensureCollection(req.db, name)
	if err != nil {
		return nil, err
	}
	var errs []writeError
	// prepared[j] is docs[at[j]], ready to insert.
	prepared := make([]bson.Raw, 0, len(docs))
	at := make([]int, 0, len(docs))
	for i, d := range docs {
		p, err := prepareInsert(d)
		if err != nil {
			errs = append(errs, writeError{i, err})
			if ordered {
				break
			}
			continue
		}
		prepared, at = append(prepared, p), append(at, i)
	}
	n := 0
	if len(errs) == 0 {
		err := c.writeTxn(sync, func() error {
			for _, d := range prepared {
				if err := coll.Insert(c.sess, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			n = len(prepared)
			prepared = nil
		}
		if isInterrupted(err) {
			return nil, err
		}
	}
	// One document per transaction, to report each failure in its place.
	for j, d := range prepared {
		if err := c.writeTxn(sync, func() error { return coll.Insert(c.sess, d) }); err != nil {
			if isInterrupted(err) {
				return nil, err
			}
			errs = append(errs, writeError{at[j], err})
			if ordered {
				break
			}
			continue
		}
		n++
	}
	// A refused document and a failed insert before it: an ordered insert
	// stopped at the first.
	slices.SortFunc(errs, func(a, b writeError) int { return a.index - b.index })
	if ordered && len(errs) > 1 {
		errs = errs[:1]
	}
	c.s.stats.opInsert.Add(int64(n))
	c.s.stats.docInserted.Add(int64(n))
	dst = bsoncore.AppendInt32Element(dst, "n", int32(n))
	return appendWriteErrors(dst, errs), nil
}

// updateSpec is one statement of an update command.
type updateSpec struct {
	q, u          bson.Raw
	upsert, multi bool
}

func parseUpdateSpec(d bson.Raw) (updateSpec, error) {
	var s updateSpec
	doc := bsoncore.Document(d)
	qv, err := doc.LookupErr("q")
	if err != nil || qv.Type != bsoncore.TypeEmbeddedDocument {
		return s, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'update.updates.q' is missing but a required field")
	}
	s.q = bson.Raw(qv.Document())
	uv, err := doc.LookupErr("u")
	if err != nil {
		return s, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'update.updates.u' is missing but a required field")
	}
	if uv.Type == bsoncore.TypeArray {
		return s, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod does not support pipeline-style updates")
	}
	if uv.Type != bsoncore.TypeEmbeddedDocument {
		return s, mongoerr.New(mongoerr.CodeFailedToParse, "Update argument must be either an object or an array")
	}
	s.u = bson.Raw(uv.Document())
	if v, err := doc.LookupErr("upsert"); err == nil && v.Type == bsoncore.TypeBoolean {
		s.upsert = v.Boolean()
	}
	if v, err := doc.LookupErr("multi"); err == nil && v.Type == bsoncore.TypeBoolean {
		s.multi = v.Boolean()
	}
	if _, err := doc.LookupErr("arrayFilters"); err == nil {
		return s, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod does not support arrayFilters")
	}
	return s, nil
}

// updateResult is what one update statement did.
type updateResult struct {
	n, modified int64
	upserted    bsoncore.Value
	newDoc      bson.Raw // the document after the update (single updates)
	oldDoc      bson.Raw
}

func cmdUpdate(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	specs, err := docsArg(req, "updates")
	if err != nil {
		return nil, err
	}
	wc, err := writeConcernArg(req)
	if err != nil {
		return nil, err
	}
	ordered, sync := orderedArg(req), wc.sync()
	var errs []writeError
	var n, modified int64
	type upserted struct {
		index int
		id    bsoncore.Value
	}
	var ups []upserted
	for i, raw := range specs {
		c.s.stats.opUpdate.Add(1)
		spec, err := parseUpdateSpec(raw)
		var res updateResult
		if err == nil {
			res, err = c.update(req.db, name, spec.q, spec.u, nil, spec.upsert, spec.multi, sync)
		}
		if err != nil {
			errs = append(errs, writeError{i, err})
			if ordered {
				break
			}
			continue
		}
		n += res.n
		modified += res.modified
		if res.upserted.Type != 0 {
			ups = append(ups, upserted{i, res.upserted})
		}
	}
	dst = bsoncore.AppendInt32Element(dst, "n", int32(n))
	dst = bsoncore.AppendInt32Element(dst, "nModified", int32(modified))
	if len(ups) > 0 {
		a, d := bsoncore.AppendArrayElementStart(dst, "upserted")
		for j, u := range ups {
			e, dd := bsoncore.AppendDocumentElementStart(d, itoa(j))
			dd = bsoncore.AppendInt32Element(dd, "index", int32(u.index))
			dd = bsoncore.AppendValueElement(dd, "_id", u.id)
			d, _ = bsoncore.AppendDocumentEnd(dd, e)
		}
		dst, _ = bsoncore.AppendArrayEnd(d, a)
	}
	return appendWriteErrors(dst, errs), nil
}

// update runs one update statement: the first match (sorted by srt when
// given) or, with multi, every match; an upsert when nothing matched.
func (c *clientConn) update(db, name string, q, u bson.Raw, srt *query.Sort, upsert, multi, sync bool) (updateResult, error) {
	var res updateResult
	m, err := query.Compile(q)
	if err != nil {
		return res, err
	}
	upd, err := query.CompileUpdate(u)
	if err != nil {
		return res, err
	}
	if upd.IsReplacement() && multi {
		return res, mongoerr.New(mongoerr.CodeFailedToParse, "multi update is not supported for replacement-style update")
	}
	coll := c.s.eng.Collection(db, name)
	if coll == nil && !upsert {
		return res, nil
	}
	if coll == nil {
		if coll, err = c.ensureCollection(db, name); err != nil {
			return res, err
		}
	}
	if multi {
		var err error
		res.n, res.modified, err = c.eachMatch(db, name, coll, m, sync, func(pk []byte, old bson.Raw) (bool, error) {
			out, ch, err := applyUpdate(upd, old)
			if err != nil || !ch {
				return false, err
			}
			return true, coll.Replace(c.sess, pk, old, out)
		})
		if err != nil {
			return res, err
		}
	} else {
		err := c.writeTxn(sync, func() error {
			res = updateResult{}
			ex := c.newExecutor(coll, m, srt, 0, 1, nil)
			defer ex.detach()
			pk, doc, err := ex.next(c.sess)
			if err == wt.ErrNotFound {
				return nil
			}
			if err != nil {
				return err
			}
			pk = append([]byte(nil), pk...)
			old := append(bson.Raw(nil), doc...)
			if len(pk) == 0 {
				pk, _, _ = storage.IDKey(nil, old)
			}
			out, ch, err := applyUpdate(upd, old)
			if err != nil {
				return err
			}
			res.n, res.oldDoc, res.newDoc = 1, old, out
			if !ch {
				return nil
			}
			res.modified = 1
			return coll.Replace(c.sess, pk, old, out)
		})
		if err != nil {
			return res, err
		}
	}
	c.s.stats.docUpdated.Add(res.modified)
	if res.n > 0 || !upsert {
		return res, nil
	}
	return c.upsert(coll, q, upd, sync)
}

var errSkip = errors.New("skip")

// upsert inserts the document an update with no match creates.
func (c *clientConn) upsert(coll *storage.Collection, q bson.Raw, upd *query.Update, sync bool) (updateResult, error) {
	var res updateResult
	base, err := upd.UpsertBase(q)
	if err != nil {
		return res, err
	}
	if len(base) > mongoerr.MaxBSONObjectSize {
		return res, mongoerr.New(mongoerr.CodeUpsertTooLarge, "Document to upsert is larger than %d", mongoerr.MaxBSONObjectSize)
	}
	doc, err := prepareInsert(base)
	if err != nil {
		return res, err
	}
	if err := c.writeTxn(sync, func() error { return coll.Insert(c.sess, doc) }); err != nil {
		return res, err
	}
	res.n = 1
	res.upserted = bsoncore.Document(doc).Lookup("_id")
	res.newDoc = doc
	c.s.stats.docInserted.Add(1)
	return res, nil
}

// matchingKeys returns the table keys of every document matching m.
func (c *clientConn) matchingKeys(coll *storage.Collection, m *query.Matcher) ([][]byte, error) {
	ex := c.newExecutor(coll, m, nil, 0, 0, nil)
	defer ex.detach()
	var out [][]byte
	err := ex.each(c.sess, func(pk, doc []byte) error {
		if len(pk) == 0 {
			pk, _, _ = storage.IDKey(nil, bson.Raw(doc))
		}
		out = append(out, append([]byte(nil), pk...))
		return nil
	})
	return out, err
}

func cmdDelete(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	specs, err := docsArg(req, "deletes")
	if err != nil {
		return nil, err
	}
	wc, err := writeConcernArg(req)
	if err != nil {
		return nil, err
	}
	ordered, sync := orderedArg(req), wc.sync()
	var errs []writeError
	var n int64
	for i, raw := range specs {
		c.s.stats.opDelete.Add(1)
		doc := bsoncore.Document(raw)
		qv, err := doc.LookupErr("q")
		if err != nil || qv.Type != bsoncore.TypeEmbeddedDocument {
			errs = append(errs, writeError{i, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'delete.deletes.q' is missing but a required field")})
			if ordered {
				break
			}
			continue
		}
		one, err := deleteLimit(doc)
		if err != nil {
			errs = append(errs, writeError{i, err})
			if ordered {
				break
			}
			continue
		}
		k, _, err := c.deleteMatching(req.db, name, bson.Raw(qv.Document()), nil, one, sync)
		if err != nil {
			errs = append(errs, writeError{i, err})
			if ordered {
				break
			}
			continue
		}
		n += k
	}
	dst = bsoncore.AppendInt32Element(dst, "n", int32(n))
	return appendWriteErrors(dst, errs), nil
}

// deleteLimit reads a delete statement's required limit as mongod does: a
// number that is 0 (every match) or 1 (the first); one reports 1.
func deleteLimit(stmt bsoncore.Document) (one bool, err error) {
	lv, err := stmt.LookupErr("limit")
	if err != nil {
		return false, mongoerr.New(mongoerr.CodeMissingField, "BSON field 'delete.deletes.limit' is missing but a required field")
	}
	f, ok := lv.AsFloat64OK()
	if !ok {
		return false, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'delete.deletes.limit' is the wrong type '%s', expected types '[long, int, decimal, double]'", typeName(lv.Type))
	}
	if f != 0 && f != 1 {
		return false, mongoerr.New(mongoerr.CodeFailedToParse, "The limit field in delete objects must be 0 or 1. Got %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return f == 1, nil
}

// deleteMatching deletes the first match of q (in srt order) or every
// match; it returns how many and, for a single delete, the document.
func (c *clientConn) deleteMatching(db, name string, q bson.Raw, srt *query.Sort, one, sync bool) (int64, bson.Raw, error) {
	m, err := query.Compile(q)
	if err != nil {
		return 0, nil, err
	}
	coll := c.s.eng.Collection(db, name)
	if coll == nil {
		return 0, nil, nil
	}
	if one {
		var deleted bson.Raw
		err := c.writeTxn(sync, func() error {
			deleted = nil
			ex := c.newExecutor(coll, m, srt, 0, 1, nil)
			defer ex.detach()
			_, doc, err := ex.next(c.sess)
			if err == wt.ErrNotFound {
				return nil
			}
			if err != nil {
				return err
			}
			old := append(bson.Raw(nil), doc...)
			pk, _, _ := storage.IDKey(nil, old)
			deleted = old
			return coll.Delete(c.sess, pk, old)
		})
		if err != nil || deleted == nil {
			return 0, nil, err
		}
		c.s.stats.docDeleted.Add(1)
		return 1, deleted, nil
	}
	n, _, err := c.eachMatch(db, name, coll, m, sync, func(pk []byte, old bson.Raw) (bool, error) {
		return true, coll.Delete(c.sess, pk, old)
	})
	c.s.stats.docDeleted.Add(n)
	if err != nil {
		return n, nil, err
	}
	return n, nil, nil
}

func cmdFindAndModify(c *clientConn, req *request, dst []byte) ([]byte, error) {
	name, err := collName(req)
	if err != nil {
		return nil, err
	}
	q, err := docArg(req, "query")
	if err != nil {
		return nil, err
	}
	if q == nil {
		q = bson.Raw(bsoncore.NewDocumentBuilder().Build())
	}
	srt, err := sortArg(req, "sort")
	if err != nil {
		return nil, err
	}
	fields, err := docArg(req, "fields")
	if err != nil {
		return nil, err
	}
	proj, err := query.CompileProjection(fields)
	if err != nil {
		return nil, err
	}
	wc, err := writeConcernArg(req)
	if err != nil {
		return nil, err
	}
	remove, returnNew, upsert, sync := boolArg(req, "remove"), boolArg(req, "new"), boolArg(req, "upsert"), wc.sync()
	u, err := docArg(req, "update")
	if err != nil {
		return nil, err
	}
	if remove && (u != nil || returnNew || upsert) {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "Cannot specify both an update and remove=true")
	}
	if !remove && u == nil {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "Either an update or remove=true must be specified")
	}
	var value bson.Raw
	le, d := bsoncore.AppendDocumentElementStart(dst, "lastErrorObject")
	if remove {
		n, doc, err := c.deleteMatching(req.db, name, q, srt, true, sync)
		if err != nil {
			return nil, err
		}
		d = bsoncore.AppendInt32Element(d, "n", int32(n))
		value = doc
	} else {
		res, err := c.update(req.db, name, q, u, srt, upsert, false, sync)
		if err != nil {
			return nil, err
		}
		d = bsoncore.AppendInt32Element(d, "n", int32(res.n))
		d = bsoncore.AppendBooleanElement(d, "updatedExisting", res.n > 0 && res.upserted.Type == 0)
		if res.upserted.Type != 0 {
			d = bsoncore.AppendValueElement(d, "upserted", res.upserted)
		}
		if returnNew {
			value = res.newDoc
		} else if res.upserted.Type == 0 {
			value = res.oldDoc
		}
	}
	d, _ = bsoncore.AppendDocumentEnd(d, le)
	if value == nil {
		return bsoncore.AppendNullElement(d, "value"), nil
	}
	d = bsoncore.AppendHeader(d, bsoncore.TypeEmbeddedDocument, "value")
	return proj.Apply(d, value), nil
}

// eachMatch applies fn, in one write transaction per document (as mongod
// does for multi-document writes), to every document of coll matching m:
// the matching keys are read first, then each document is read again and
// rechecked inside its transaction. fn returns whether it changed the
// document. It stops when the collection is dropped or the operation
// killed, and returns how many documents matched and were changed.
func (c *clientConn) eachMatch(db, name string, coll *storage.Collection, m *query.Matcher, sync bool,
	fn func(pk []byte, old bson.Raw) (bool, error)) (matched, changed int64, err error) {
	var pks [][]byte
	err = c.storage(writeTicket, func() error {
		var err error
		pks, err = c.matchingKeys(coll, m)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	for _, pk := range pks {
		var ch bool
		err := c.writeTxn(sync, func() error {
			ch = false
			if c.s.eng.Collection(db, name) != coll {
				return errCollectionGone
			}
			if err := c.op.interrupted(); err != nil {
				return err
			}
			doc, err := coll.Get(c.sess, pk)
			if err == wt.ErrNotFound || (err == nil && !m.Match(bson.Raw(doc))) {
				return errSkip
			}
			if err != nil {
				return err
			}
			ch, err = fn(pk, append(bson.Raw(nil), doc...))
			return err
		})
		switch {
		case err == errSkip:
			continue
		case err == errCollectionGone:
			return matched, changed, nil
		case err != nil:
			return matched, changed, err
		}
		matched++
		if ch {
			changed++
		}
	}
	return matched, changed, nil
}
