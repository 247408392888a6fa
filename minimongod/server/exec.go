package server

import (
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

// executor yields the documents of a query in order, after filtering,
// sorting, skip and limit. It survives between getMore requests.
type executor struct {
	s       *Server
	coll    *storage.Collection
	plan    plan
	m       *query.Matcher
	srt     *query.Sort
	seen    map[string]struct{}
	skip    int64
	limit   int64 // remaining; <0 unlimited
	sorted  [][]byte
	pos     int
	didSort bool
	// pointDone is set once an _id equality has been looked up.
	pointDone    bool
	docsExamined int64
	// matched counts matching documents before skip and limit, and keys
	// and docs the whole execution examined (explain, the profiler).
	matched, totalKeys, totalDocs, sortBytes int64
	// op is the operation the executor works for now, checked for
	// interruption every interruptCheckDocs documents.
	op *operation
	// summary is plan.summary(), built at the first detach (a cursor's
	// getMores reuse it).
	summary string
}

// interruptCheckDocs is how often a scan checks whether it was killed.
const interruptCheckDocs = 128

// newExecutor returns an executor working for c's current operation.
// h, when not nil, is the query's hint and decides the plan.
func (c *clientConn) newExecutor(coll *storage.Collection, m *query.Matcher, srt *query.Sort, skip, limit int64, h *queryHint) *executor {
	e := newExecutor(c.s, coll, m, srt, skip, limit, h)
	e.op = c.op
	return e
}

func newExecutor(s *Server, c *storage.Collection, m *query.Matcher, srt *query.Sort, skip, limit int64, h *queryHint) *executor {
	var p plan
	if h != nil {
		p = planHinted(c, h, m, srt)
	} else {
		p = planQuery(c, m, srt)
	}
	e := &executor{s: s, coll: c, plan: p, m: m, srt: srt, skip: skip, limit: limit}
	if limit == 0 {
		e.limit = -1
	}
	if p.dedupe {
		e.seen = map[string]struct{}{}
	}
	return e
}

// next returns the next result (table key and document) or wt.ErrNotFound.
// The slices are valid until the session's next operation.
func (e *executor) next(sess *storage.Session) (pk, doc []byte, err error) {
	if e.limit == 0 {
		return nil, nil, wt.ErrNotFound
	}
	if e.srt != nil && !e.plan.sorted && !e.didSort {
		if err := e.sortAll(sess); err != nil {
			return nil, nil, err
		}
	}
	for {
		pk, doc, err = e.nextMatch(sess)
		if err != nil {
			return nil, nil, err
		}
		if e.skip > 0 {
			e.skip--
			continue
		}
		if e.limit > 0 {
			e.limit--
		}
		return pk, doc, nil
	}
}

// each calls f with every result (table key and document, valid during
// the call) until the end or f's error.
func (e *executor) each(sess *storage.Session, f func(pk, doc []byte) error) error {
	for {
		pk, doc, err := e.next(sess)
		if err == wt.ErrNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(pk, doc); err != nil {
			return err
		}
	}
}

// nextMatch returns the next matching document, before skip and limit.
func (e *executor) nextMatch(sess *storage.Session) (pk, doc []byte, err error) {
	if e.didSort {
		if e.pos >= len(e.sorted) {
			return nil, nil, wt.ErrNotFound
		}
		d := e.sorted[e.pos]
		e.sorted[e.pos] = nil
		e.pos++
		return nil, d, nil
	}
	if e.plan.point != nil || e.pointDone {
		return e.lookupPoint(sess)
	}
	for {
		pk, doc, err := e.plan.scan.Next(sess)
		if err != nil {
			return nil, nil, err
		}
		e.docsExamined++
		if e.docsExamined%interruptCheckDocs == 0 {
			if err := e.op.interrupted(); err != nil {
				return nil, nil, err
			}
		}
		if e.seen != nil {
			if _, dup := e.seen[string(pk)]; dup {
				continue
			}
			e.seen[string(pk)] = struct{}{}
		}
		if e.m.Match(bson.Raw(doc)) {
			e.matched++
			return pk, doc, nil
		}
	}
}

// sortAll reads every match into memory and sorts it, within the blocking
// sort limit (internalQueryExecMaxBlockingSortBytes), as mongod does.
func (e *executor) sortAll(sess *storage.Session) error {
	limitBytes := e.s.params.sortLimit()
	var total int64
	var docs [][]byte
	for {
		_, doc, err := e.nextMatch(sess)
		if err == wt.ErrNotFound {
			break
		}
		if err != nil {
			return err
		}
		total += int64(len(doc))
		if total > limitBytes {
			return mongoerr.New(mongoerr.CodeQueryExceededMemory, "Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", limitBytes)
		}
		docs = append(docs, append([]byte(nil), doc...))
	}
	sort.SliceStable(docs, func(i, j int) bool { return e.srt.Compare(docs[i], docs[j]) < 0 })
	e.sorted, e.didSort, e.sortBytes = docs, true, total
	e.s.stats.scanAndOrder.Add(1)
	return nil
}

// collectionGone reports whether the collection the executor scans was
// dropped (or replaced) since it started. An executor over documents held
// in memory (an aggregation's result) has no collection and is never gone.
func (e *executor) collectionGone(eng *storage.Engine) bool {
	return e.coll != nil && eng.Collection(e.coll.DB, e.coll.Name) != e.coll
}

// detach releases WiredTiger resources between requests.
func (e *executor) detach() {
	if e.plan.scan == nil {
		return
	}
	e.plan.scan.Detach()
	keys := e.plan.scan.Examined
	if e.plan.index == "" {
		keys = 0 // a collection scan examines documents, no index keys
	}
	e.s.stats.docsExamined.Add(e.docsExamined)
	e.s.stats.keysExamined.Add(keys)
	e.totalDocs += e.docsExamined
	e.totalKeys += keys
	if e.op != nil {
		e.op.docsExamined += e.docsExamined
		e.op.keysExamined += keys
		if e.summary == "" {
			e.summary = e.plan.summary()
		}
		e.op.planSummary = e.summary
	}
	e.docsExamined = 0
	e.plan.scan.Examined = 0
}

// lookupPoint serves an _id equality with one search; a missing _id
// counts no key and no document examined.
func (e *executor) lookupPoint(sess *storage.Session) (pk, doc []byte, err error) {
	if e.pointDone {
		return nil, nil, wt.ErrNotFound
	}
	pk, e.pointDone = e.plan.point, true
	e.plan.point = nil
	doc, err = e.coll.Get(sess, pk)
	if err != nil {
		return nil, nil, err
	}
	// As mongod's IDHACK: a key that is not there examined nothing.
	e.plan.scan.Examined++
	e.docsExamined++
	if !e.m.Match(bson.Raw(doc)) {
		return nil, nil, wt.ErrNotFound
	}
	e.matched++
	return pk, doc, nil
}
