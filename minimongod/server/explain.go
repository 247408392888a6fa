package server

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
)

// explainVerbosities are mongod's explain modes.
var explainVerbosities = map[string]bool{"queryPlanner": true, "executionStats": true, "allPlansExecution": true}

// cmdExplain is {explain: {find | count | aggregate | update | delete |
// findAndModify ...}, verbosity}: the plan the executor uses, and with
// executionStats the counts of running it (without writing anything).
func cmdExplain(c *clientConn, req *request, dst []byte) ([]byte, error) {
	v := req.body.Index(0).Value()
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "explain command requires a nested object")
	}
	verbosity := "allPlansExecution"
	if vv, err := req.lookupErr("verbosity"); err == nil {
		if vv.Type != bsoncore.TypeString || !explainVerbosities[vv.StringValue()] {
			return nil, mongoerr.New(mongoerr.CodeFailedToParse, "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}")
		}
		verbosity = vv.StringValue()
	}
	inner := &request{db: req.db, body: v.Document()}
	first, err := inner.body.IndexErr(0)
	if err != nil {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "explain command requires a nested object")
	}
	inner.name = first.Key()
	name, err := collName(inner)
	if err != nil && inner.name != "aggregate" {
		return nil, err
	}
	if inner.name == "aggregate" {
		pv, err := inner.body.LookupErr("pipeline")
		if err != nil || pv.Type != bsoncore.TypeArray {
			return nil, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'aggregate.pipeline' is missing but a required field")
		}
		stages, _ := pv.Array().Values()
		filter, sortSpec, rest := splitPipeline(stages)
		return c.explainAggregate(dst, req.db, name, filter, sortSpec, rest, verbosity)
	}
	shape, err := explainShape(inner)
	if err != nil {
		return nil, err
	}
	h, err := hintArg(inner, c.s.eng.Collection(req.db, name))
	if err != nil {
		return nil, err
	}
	return c.explainQuery(dst, req.db, name, shape, h, verbosity)
}

// explainShape reads the query part of the command to explain.
func explainShape(req *request) (queryShape, error) {
	var s queryShape
	var err error
	filterField, sortField := "filter", "sort"
	switch req.name {
	case "find":
		if s.skip, err = intArg(req, "skip", 0); err == nil {
			s.limit, err = intArg(req, "limit", 0)
		}
	case "count":
		filterField, sortField, s.outer = "query", "", "COUNT"
		if s.skip, err = intArg(req, "skip", 0); err == nil {
			s.limit, err = intArg(req, "limit", 0)
		}
	case "findAndModify", "findandmodify":
		filterField, s.limit, s.outer = "query", 1, "UPDATE"
		if boolArg(req, "remove") {
			s.outer = "DELETE"
		}
	case "update", "delete":
		return writeShape(req)
	default:
		return s, mongoerr.New(mongoerr.CodeCommandNotFound, "Explain failed due to unknown command: %s", req.name)
	}
	if err != nil {
		return s, err
	}
	if s.filter, err = docArg(req, filterField); err != nil {
		return s, err
	}
	if sortField != "" {
		if s.sortSpec, err = docArg(req, sortField); err == nil {
			s.srt, err = compileSort(s.sortSpec)
		}
	}
	s.limit = max(s.limit, -s.limit)
	return s, err
}

// writeShape reads the first statement of an update or delete.
func writeShape(req *request) (queryShape, error) {
	s := queryShape{outer: "UPDATE"}
	field := "updates"
	if req.name == "delete" {
		s.outer, field = "DELETE", "deletes"
	}
	stmts, err := docsArg(req, field)
	if err != nil {
		return s, err
	}
	if len(stmts) == 0 {
		return s, mongoerr.New(mongoerr.CodeInvalidLength, "Write batch sizes must be between 1 and 100000. Got 0 operations.")
	}
	stmt := bsoncore.Document(stmts[0])
	if q, err := stmt.LookupErr("q"); err == nil && q.Type == bsoncore.TypeEmbeddedDocument {
		s.filter = bson.Raw(q.Document())
	}
	if req.name == "delete" {
		one, err := deleteLimit(stmt)
		if err != nil {
			return s, err
		}
		if one {
			s.limit = 1
		}
	} else if m, err := stmt.LookupErr("multi"); err != nil || !truthy(m) {
		s.limit = 1
	}
	return s, nil
}

// explainQuery appends queryPlanner and, unless verbosity is
// queryPlanner, executionStats from running the plan to its end.
func (c *clientConn) explainQuery(dst []byte, db, name string, shape queryShape, h *queryHint, verbosity string) ([]byte, error) {
	d, err := c.appendExplain(dst, db, name, shape, h, verbosity)
	if err != nil {
		return nil, err
	}
	return appendServerInfo(d, c.s.opts.Port), nil
}

// appendExplain appends the queryPlanner and executionStats fields.
func (c *clientConn) appendExplain(dst []byte, db, name string, shape queryShape, h *queryHint, verbosity string) ([]byte, error) {
	m, err := query.Compile(shape.filter)
	if err != nil {
		return nil, err
	}
	if shape.filter == nil {
		shape.filter = bson.Raw(bsoncore.NewDocumentBuilder().Build())
	}
	coll := c.s.eng.Collection(db, name)
	var st stageStats
	var p plan
	err = c.storage(readTicket, func() error {
		if coll == nil {
			return nil
		}
		ex := c.newExecutor(coll, m, shape.srt, shape.skip, shape.limit, h)
		p = ex.plan
		if verbosity == "queryPlanner" {
			return nil
		}
		start := time.Now()
		defer ex.detach()
		if err := ex.each(c.sess, func(_, _ []byte) error { st.returned++; return nil }); err != nil {
			return err
		}
		ex.detach()
		st.millis = time.Since(start).Milliseconds()
		st.matched, st.keys, st.docs, st.sortBytes = ex.matched, ex.totalKeys, ex.totalDocs, ex.sortBytes
		return nil
	})
	if err != nil {
		return nil, err
	}
	qp, d := bsoncore.AppendDocumentElementStart(dst, "queryPlanner")
	d = bsoncore.AppendInt32Element(d, "plannerVersion", 1)
	d = bsoncore.AppendStringElement(d, "namespace", db+"."+name)
	d = bsoncore.AppendBooleanElement(d, "indexFilterSet", false)
	d = bsoncore.AppendDocumentElement(d, "parsedQuery", shape.filter)
	d = bsoncore.AppendStringElement(d, "planSummary", planSummaryOf(p, coll != nil))
	d = appendWinningPlan(d, "winningPlan", p, shape, stageStats{}, coll != nil)
	ra, d := bsoncore.AppendArrayElementStart(d, "rejectedPlans")
	d, _ = bsoncore.AppendArrayEnd(d, ra)
	d, _ = bsoncore.AppendDocumentEnd(d, qp)
	if verbosity == "queryPlanner" {
		return d, nil
	}
	st.exec = true
	if shape.outer == "" {
		st.returned = min(st.returned, max(st.matched-shape.skip, 0))
	}
	es, d := bsoncore.AppendDocumentElementStart(d, "executionStats")
	d = bsoncore.AppendBooleanElement(d, "executionSuccess", true)
	d = bsoncore.AppendInt32Element(d, "nReturned", int32(st.returned))
	d = bsoncore.AppendInt32Element(d, "executionTimeMillis", int32(st.millis))
	d = bsoncore.AppendInt32Element(d, "totalKeysExamined", int32(st.keys))
	d = bsoncore.AppendInt32Element(d, "totalDocsExamined", int32(st.docs))
	d = appendWinningPlan(d, "executionStages", p, shape, st, coll != nil)
	if verbosity == "allPlansExecution" {
		aa, dd := bsoncore.AppendArrayElementStart(d, "allPlansExecution")
		d, _ = bsoncore.AppendArrayEnd(dd, aa)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, es)
	return d, nil
}

// planSummaryOf is the plan's summary, "EOF" for a missing collection.
func planSummaryOf(p plan, exists bool) string {
	if !exists {
		return "EOF"
	}
	return p.summary()
}

// explainAggregate explains a pipeline as mongod 4.4 does: the leading
// $match and $sort as a $cursor stage with its plan, then the other
// stages as given.
func (c *clientConn) explainAggregate(dst []byte, db, name string, filter, sortSpec bson.Raw, rest []bsoncore.Value, verbosity string) ([]byte, error) {
	srt, err := compileSort(sortSpec)
	if err != nil {
		return nil, err
	}
	shape := queryShape{filter: filter, srt: srt, sortSpec: sortSpec}
	sa, d := bsoncore.AppendArrayElementStart(dst, "stages")
	ci, d := bsoncore.AppendDocumentElementStart(d, "0")
	cu, d := bsoncore.AppendDocumentElementStart(d, "$cursor")
	if d, err = c.appendExplain(d, db, name, shape, nil, verbosity); err != nil {
		return nil, err
	}
	d, _ = bsoncore.AppendDocumentEnd(d, cu)
	d, _ = bsoncore.AppendDocumentEnd(d, ci)
	for i, st := range rest {
		d = bsoncore.AppendValueElement(d, itoa(i+1), st)
	}
	d, _ = bsoncore.AppendArrayEnd(d, sa)
	return appendServerInfo(d, c.s.opts.Port), nil
}

// appendServerInfo appends explain's serverInfo.
func appendServerInfo(dst []byte, port int) []byte {
	si, d := bsoncore.AppendDocumentElementStart(dst, "serverInfo")
	d = bsoncore.AppendStringElement(d, "host", hostname())
	d = bsoncore.AppendInt32Element(d, "port", int32(port))
	d = bsoncore.AppendStringElement(d, "version", MongoVersion)
	d = bsoncore.AppendStringElement(d, "gitVersion", "minimongod-"+Version)
	d, _ = bsoncore.AppendDocumentEnd(d, si)
	return d
}
