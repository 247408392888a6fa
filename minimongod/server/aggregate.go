package server

import (
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// stage is one aggregation stage over an in-memory stream of documents.
type stage func(docs [][]byte) ([][]byte, error)

func cmdAggregate(c *clientConn, req *request, dst []byte) ([]byte, error) {
	first := req.body.Index(0).Value()
	name := ""
	if first.Type == bsoncore.TypeString {
		name = first.StringValue()
	} else if !(first.Type == bsoncore.TypeInt32 || first.Type == bsoncore.TypeDouble || first.Type == bsoncore.TypeInt64) {
		return nil, mongoerr.New(mongoerr.CodeInvalidNamespace, "collection name has invalid type %s", typeName(first.Type))
	}
	pv, err := req.lookupErr("pipeline")
	if err != nil || pv.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field 'aggregate.pipeline' is missing but a required field")
	}
	curv, err := req.lookupErr("cursor")
	if (err != nil || curv.Type != bsoncore.TypeEmbeddedDocument) && !boolArg(req, "explain") {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize := int64(101)
	if bs, err := curv.Document().LookupErr("batchSize"); err == nil && curv.Type == bsoncore.TypeEmbeddedDocument {
		batchSize, _ = bs.AsInt64OK()
	}
	stages, _ := pv.Array().Values()
	ns := req.db + "." + name
	if name == "" {
		ns = req.db + ".$cmd.aggregate"
	}
	if cur, rest, ok, err := c.currentOpStage(req, stages); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return c.aggregateDocs(dst, ns, cur, rest, batchSize)
	}
	if cs, ok := leadingCollStats(stages); ok {
		doc, err := c.collStatsDoc(req.db, name, cs)
		if err != nil {
			return nil, err
		}
		return c.aggregateDocs(dst, ns, [][]byte{doc}, stages[1:], batchSize)
	}
	filter, sortSpec, rest := splitPipeline(stages)
	if _, err := compileStages(rest); err != nil {
		return nil, err
	}
	if boolArg(req, "explain") {
		return c.explainAggregate(dst, req.db, name, filter, sortSpec, rest, "queryPlanner")
	}
	docs, err := c.aggregateInput(req.db, name, filter, sortSpec)
	if err != nil {
		return nil, err
	}
	return c.aggregateDocs(dst, ns, docs, rest, batchSize)
}

// leadingCollStats returns the spec of a first $collStats stage.
func leadingCollStats(stages []bsoncore.Value) (bsoncore.Document, bool) {
	if len(stages) == 0 || stages[0].Type != bsoncore.TypeEmbeddedDocument {
		return nil, false
	}
	v, err := stages[0].Document().LookupErr("$collStats")
	if err != nil || v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, false
	}
	return v.Document(), true
}

// splitPipeline splits off a leading $match and $sort, which are planned
// against the collection.
func splitPipeline(stages []bsoncore.Value) (filter, sortSpec bson.Raw, rest []bsoncore.Value) {
	rest = stages
	if len(rest) > 0 && rest[0].Type == bsoncore.TypeEmbeddedDocument {
		if v, err := rest[0].Document().LookupErr("$match"); err == nil && v.Type == bsoncore.TypeEmbeddedDocument {
			filter, rest = bson.Raw(v.Document()), rest[1:]
		}
	}
	if len(rest) > 0 && rest[0].Type == bsoncore.TypeEmbeddedDocument {
		if v, err := rest[0].Document().LookupErr("$sort"); err == nil && v.Type == bsoncore.TypeEmbeddedDocument {
			sortSpec, rest = bson.Raw(v.Document()), rest[1:]
		}
	}
	return filter, sortSpec, rest
}

// aggregateDocs runs the stages over docs and replies with the first batch.
func (c *clientConn) aggregateDocs(dst []byte, ns string, docs [][]byte, stages []bsoncore.Value, batchSize int64) ([]byte, error) {
	pipeline, err := compileStages(stages)
	if err != nil {
		return nil, err
	}
	for _, st := range pipeline {
		if docs, err = st(docs); err != nil {
			return nil, err
		}
	}
	return c.batchReply(dst, "firstBatch", c.memoryCursor(ns, docs, nil), batchSize, false)
}

// aggregateInput reads the documents matching filter in sort order.
func (c *clientConn) aggregateInput(db, name string, filter, sortSpec bson.Raw) ([][]byte, error) {
	m, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	srt, err := compileSort(sortSpec)
	if err != nil {
		return nil, err
	}
	if name == profileCollection {
		return c.profileMatches(db, m, srt, 0, 0), nil
	}
	coll := c.s.eng.Collection(db, name)
	if coll == nil {
		return nil, nil
	}
	var docs [][]byte
	err = c.storage(readTicket, func() error {
		ex := c.newExecutor(coll, m, srt, 0, 0, nil)
		defer ex.detach()
		var total int64
		return ex.each(c.sess, func(_, doc []byte) error {
			total += int64(len(doc))
			if total > c.s.params.sortLimit() {
				return mongoerr.New(mongoerr.CodeQueryExceededMemory, "aggregation input exceeded the memory limit of %d bytes; minimongod does not spill to disk", c.s.params.sortLimit())
			}
			docs = append(docs, append([]byte(nil), doc...))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return docs, nil
}

var _ = storage.IDKey

func compileStages(stages []bsoncore.Value) ([]stage, error) {
	var out []stage
	for _, sv := range stages {
		if sv.Type != bsoncore.TypeEmbeddedDocument {
			return nil, mongoerr.New(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		elems, _ := sv.Document().Elements()
		if len(elems) != 1 {
			return nil, mongoerr.New(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		st, err := compileStage(elems[0].Key(), elems[0].Value())
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func compileStage(name string, v bsoncore.Value) (stage, error) {
	switch name {
	case "$match":
		m, err := query.Compile(bson.Raw(v.Document()))
		if err != nil {
			return nil, err
		}
		return func(docs [][]byte) ([][]byte, error) {
			out := docs[:0]
			for _, d := range docs {
				if m.Match(d) {
					out = append(out, d)
				}
			}
			return out, nil
		}, nil
	case "$skip", "$limit":
		n, ok := v.AsInt64OK()
		if !ok || n < 0 {
			return nil, mongoerr.New(15956, "invalid argument to %s stage: %s", name, v.String())
		}
		if name == "$skip" {
			return func(docs [][]byte) ([][]byte, error) { return docs[min(int64(len(docs)), n):], nil }, nil
		}
		return func(docs [][]byte) ([][]byte, error) { return docs[:min(int64(len(docs)), n)], nil }, nil
	case "$count":
		if v.Type != bsoncore.TypeString || v.StringValue() == "" {
			return nil, mongoerr.New(40156, "the count field must be a non-empty string")
		}
		field := v.StringValue()
		return func(docs [][]byte) ([][]byte, error) {
			if len(docs) == 0 {
				return nil, nil
			}
			return [][]byte{bsoncore.NewDocumentBuilder().AppendInt32(field, int32(len(docs))).Build()}, nil
		}, nil
	case "$sort":
		srt, err := query.CompileSort(bson.Raw(v.Document()))
		if err != nil {
			return nil, err
		}
		return func(docs [][]byte) ([][]byte, error) {
			sortDocs(docs, srt)
			return docs, nil
		}, nil
	case "$project":
		p, err := query.CompileProjection(bson.Raw(v.Document()))
		if err != nil {
			return nil, err
		}
		return func(docs [][]byte) ([][]byte, error) {
			for i, d := range docs {
				docs[i] = p.Apply(nil, d)
			}
			return docs, nil
		}, nil
	case "$group":
		return compileGroup(v)
	case "$addFields", "$set":
		return compileAddFields(v)
	case "$unwind":
		return compileUnwind(v)
	}
	return nil, mongoerr.New(40324, "Unrecognized pipeline stage name: '%s'", name)
}

// accumulator is one $group output field.
type accumulator struct {
	field string
	op    string
	arg   bsoncore.Value // constant or "$path"
}

type groupState struct {
	key  bsoncore.Value
	vals []accState
}

type accState struct {
	sum    float64
	isInt  bool
	intSum int64
	n      int64
	v      bsoncore.Value
	set    bool
}

func compileGroup(v bsoncore.Value) (stage, error) {
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(15947, "a group's fields must be specified in an object")
	}
	elems, _ := v.Document().Elements()
	var idExpr bsoncore.Value
	hasID := false
	var accs []accumulator
	for _, el := range elems {
		if el.Key() == "_id" {
			idExpr, hasID = el.Value(), true
			continue
		}
		spec := el.Value()
		if spec.Type != bsoncore.TypeEmbeddedDocument {
			return nil, mongoerr.New(40234, "The field '%s' must be an accumulator object", el.Key())
		}
		ops, _ := spec.Document().Elements()
		if len(ops) != 1 {
			return nil, mongoerr.New(40238, "The field '%s' must specify one accumulator", el.Key())
		}
		op := ops[0].Key()
		switch op {
		case "$sum", "$avg", "$min", "$max", "$first", "$last", "$count":
		default:
			return nil, mongoerr.New(15952, "unknown group operator '%s'", op)
		}
		accs = append(accs, accumulator{field: el.Key(), op: op, arg: ops[0].Value()})
	}
	if !hasID {
		return nil, mongoerr.New(15955, "a group specification must include an _id")
	}
	return func(docs [][]byte) ([][]byte, error) {
		var order []*groupState
		groups := map[string]*groupState{}
		for _, d := range docs {
			key := evalExpr(d, idExpr)
			k := string(keyenc.Append(nil, key))
			g := groups[k]
			if g == nil {
				g = &groupState{key: key, vals: make([]accState, len(accs))}
				for i := range g.vals {
					g.vals[i].isInt = true
				}
				groups[k] = g
				order = append(order, g)
			}
			for i, a := range accs {
				accumulate(&g.vals[i], a, evalExpr(d, a.arg))
			}
		}
		out := make([][]byte, 0, len(order))
		for _, g := range order {
			b := bsoncore.NewDocumentBuilder().AppendValue("_id", g.key)
			for i, a := range accs {
				b.AppendValue(a.field, result(&g.vals[i], a))
			}
			out = append(out, b.Build())
		}
		return out, nil
	}, nil
}

// evalExpr evaluates a constant or "$field.path" against doc.
func evalExpr(doc []byte, expr bsoncore.Value) bsoncore.Value {
	if expr.Type == bsoncore.TypeString && strings.HasPrefix(expr.StringValue(), "$") {
		v, ok := query.Lookup(doc, expr.StringValue()[1:])
		if !ok {
			return bsoncore.Value{Type: bsoncore.TypeNull}
		}
		return v
	}
	if expr.Type == 0 {
		return bsoncore.Value{Type: bsoncore.TypeNull}
	}
	return expr
}

func accumulate(s *accState, a accumulator, v bsoncore.Value) {
	switch a.op {
	case "$sum", "$avg", "$count":
		if a.op == "$count" {
			v = bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, 1)}
		}
		if !v.IsNumber() {
			return
		}
		s.n++
		if i, ok := v.AsInt64OK(); ok && v.Type != bsoncore.TypeDouble && s.isInt {
			s.intSum += i
		} else {
			if s.isInt {
				s.sum = float64(s.intSum)
				s.isInt = false
			}
			f, _ := v.AsFloat64OK()
			s.sum += f
		}
	case "$min", "$max":
		if v.Type == bsoncore.TypeNull {
			return
		}
		if !s.set || (a.op == "$min" && query.Compare(v, s.v) < 0) || (a.op == "$max" && query.Compare(v, s.v) > 0) {
			s.v, s.set = v, true
		}
	case "$first":
		if !s.set {
			s.v, s.set = v, true
		}
	case "$last":
		s.v, s.set = v, true
	}
}

func result(s *accState, a accumulator) bsoncore.Value {
	switch a.op {
	case "$sum", "$count":
		if s.isInt {
			if s.intSum >= math.MinInt32 && s.intSum <= math.MaxInt32 {
				return bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, int32(s.intSum))}
			}
			return bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, s.intSum)}
		}
		return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, s.sum)}
	case "$avg":
		if s.n == 0 {
			return bsoncore.Value{Type: bsoncore.TypeNull}
		}
		total := s.sum
		if s.isInt {
			total = float64(s.intSum)
		}
		return bsoncore.Value{Type: bsoncore.TypeDouble, Data: bsoncore.AppendDouble(nil, total/float64(s.n))}
	}
	if !s.set {
		return bsoncore.Value{Type: bsoncore.TypeNull}
	}
	return s.v
}

func sortDocs(docs [][]byte, srt *query.Sort) {
	sort.SliceStable(docs, func(i, j int) bool { return srt.Compare(docs[i], docs[j]) < 0 })
}
