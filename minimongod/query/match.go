package query

import (
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// maxFilterDepth bounds the nesting of logical operators, as mongod does.
const maxFilterDepth = 100

// Matcher is a compiled query filter.
type Matcher struct {
	root  node
	preds []Predicate
	idEq  bsoncore.Value
	idOK  bool
}

// node is one compiled filter expression, evaluated against a document (or,
// inside $elemMatch, against an array element).
type node interface {
	match(v bsoncore.Value) bool
}

// andNode matches when every child matches (an empty AND matches all).
type andNode []node

func (n andNode) match(v bsoncore.Value) bool {
	for _, c := range n {
		if !c.match(v) {
			return false
		}
	}
	return true
}

// orNode matches when any child matches.
type orNode []node

func (n orNode) match(v bsoncore.Value) bool {
	for _, c := range n {
		if c.match(v) {
			return true
		}
	}
	return false
}

// notNode inverts its child ($not, $ne, $nin, $nor, $exists: false).
type notNode struct{ n node }

func (n notNode) match(v bsoncore.Value) bool { return !n.n.match(v) }

// Compile parses a query filter. A nil or empty filter matches everything.
func Compile(filter bson.Raw) (*Matcher, error) {
	if len(filter) == 0 {
		return &Matcher{root: andNode(nil)}, nil
	}
	if v, ok := plainIDEquality(filter); ok {
		// {_id: v}, the commonest filter: what the general path below
		// builds for it, without walking the filter three times, in one
		// allocation.
		c := &idEqMatcher{val: v}
		c.cmp = cmpPred{op: opEq, rhs: v}
		c.node = pathNode{p: idPath, pred: &c.cmp}
		c.preds[0] = Predicate{Path: "_id", Eq: &c.val}
		c.m = Matcher{root: &c.node, preds: c.preds[:], idEq: v, idOK: true}
		return &c.m, nil
	}
	return compileGeneral(&Matcher{}, filter)
}

// idEqMatcher is everything the Matcher of {_id: v} points to.
type idEqMatcher struct {
	m     Matcher
	node  pathNode
	cmp   cmpPred
	preds [1]Predicate
	val   bsoncore.Value
}

// compileGeneral compiles any non-empty filter into m.
func compileGeneral(m *Matcher, filter bson.Raw) (*Matcher, error) {
	root, err := compileDoc(filter, 0)
	if err != nil {
		return nil, err
	}
	m.root = root
	m.preds = derivePredicates(filter)
	m.idEq, m.idOK = deriveIDEquality(filter)
	return m, nil
}

// idPath is the path "_id"; compiled filters only read their paths.
var idPath = newPath("_id")

// plainIDEquality recognises a filter that is exactly {_id: v} with v an
// index point (eqIndexable) and not a document.
func plainIDEquality(filter []byte) (bsoncore.Value, bool) {
	it := rawbson.NewIter(filter)
	k, v, ok := it.Next()
	if !ok || string(k) != "_id" || v.Type == bsoncore.TypeEmbeddedDocument || !eqIndexable(v) {
		return bsoncore.Value{}, false
	}
	if _, _, more := it.Next(); more {
		return bsoncore.Value{}, false
	}
	return v, true
}

// Match reports whether doc satisfies the filter.
func (m *Matcher) Match(doc bson.Raw) bool {
	return m.root.match(bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc})
}

// compileDoc compiles a filter document: an implicit AND of its fields.
func compileDoc(filter []byte, depth int) (node, error) {
	if depth > maxFilterDepth {
		return nil, mongoerr.New(mongoerr.CodeBadValue,
			"exceeded depth limit of %d when parsing query", maxFilterDepth)
	}
	var out andNode
	it := rawbson.NewIter(filter)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		n, err := compileField(string(k), v, depth)
		if err != nil {
			return nil, err
		}
		if n != nil {
			out = append(out, n)
		}
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

// compileField compiles one top-level filter element.
func compileField(key string, v bsoncore.Value, depth int) (node, error) {
	if strings.HasPrefix(key, "$") {
		return compileTopOperator(key, v, depth)
	}
	return compilePathValue(newPath(key), v, depth)
}

// compileTopOperator compiles $and, $or, $nor and the ignored $comment.
func compileTopOperator(op string, v bsoncore.Value, depth int) (node, error) {
	switch op {
	case "$and", "$or", "$nor":
		children, err := compileLogical(v, depth)
		if err != nil {
			return nil, err
		}
		switch op {
		case "$and":
			return andNode(children), nil
		case "$or":
			return orNode(children), nil
		}
		return notNode{orNode(children)}, nil
	case "$comment":
		return nil, nil
	case "$expr", "$where", "$text", "$jsonSchema", "$sampleRate":
		return nil, mongoerr.New(mongoerr.CodeNotImplemented, "%s is not supported", op)
	}
	return nil, mongoerr.New(mongoerr.CodeBadValue, "unknown top level operator: %s", op)
}

// compileLogical compiles the array operand of $and/$or/$nor.
func compileLogical(v bsoncore.Value, depth int) ([]node, error) {
	if v.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$and/$or/$nor must be a nonempty array")
	}
	var children []node
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		if e.Type != bsoncore.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "$or/$and/$nor entries need to be full objects")
		}
		n, err := compileDoc(e.Data, depth+1)
		if err != nil {
			return nil, err
		}
		children = append(children, n)
	}
	if len(children) == 0 {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "$and/$or/$nor must be a nonempty array")
	}
	return children, nil
}

// compilePathValue compiles {path: v}: an operator document, a regex, or an
// implicit equality.
func compilePathValue(p path, v bsoncore.Value, depth int) (node, error) {
	if isOperatorDoc(v) {
		return compileOperators(p, v.Data, depth)
	}
	if v.Type == bsoncore.TypeRegex {
		rp, err := newRegexPred(v)
		if err != nil {
			return nil, err
		}
		return &pathNode{p: p, pred: rp}, nil
	}
	return &pathNode{p: p, pred: &cmpPred{op: opEq, rhs: v}}, nil
}

// compileOperators compiles an operator document {$gt: 1, $lt: 5} on p.
func compileOperators(p path, ops []byte, depth int) (node, error) {
	var out andNode
	it := rawbson.NewIter(ops)
	var regex, options *bsoncore.Value
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "$regex":
			regex = &v
			continue
		case "$options":
			options = &v
			continue
		}
		n, err := compileOperator(p, string(k), v, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if regex != nil || options != nil {
		n, err := compileRegexOperator(p, regex, options)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return out, nil
}

// compileOperator compiles a single field operator.
func compileOperator(p path, op string, v bsoncore.Value, depth int) (node, error) {
	leaf := func(pr leafPred) (node, error) { return &pathNode{p: p, pred: pr}, nil }
	switch op {
	case "$eq":
		return leaf(&cmpPred{op: opEq, rhs: v})
	case "$gt":
		return leaf(&cmpPred{op: opGt, rhs: v})
	case "$gte":
		return leaf(&cmpPred{op: opGte, rhs: v})
	case "$lt":
		return leaf(&cmpPred{op: opLt, rhs: v})
	case "$lte":
		return leaf(&cmpPred{op: opLte, rhs: v})
	case "$ne":
		if v.Type == bsoncore.TypeRegex {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "Can't have regex as arg to $ne.")
		}
		return notNode{&pathNode{p: p, pred: &cmpPred{op: opEq, rhs: v}}}, nil
	case "$in", "$nin":
		return compileIn(p, op, v)
	case "$exists":
		n := &pathNode{p: p, pred: existsPred{}}
		if truthy(v) {
			return n, nil
		}
		return notNode{n}, nil
	case "$not":
		return compileNot(p, v, depth)
	}
	return compileArrayOperator(p, op, v, depth)
}

// compileIn compiles $in and $nin.
func compileIn(p path, op string, v bsoncore.Value) (node, error) {
	if v.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeBadValue, "%s needs an array", op)
	}
	pr, err := newInPred(v.Data)
	if err != nil {
		return nil, err
	}
	n := &pathNode{p: p, pred: pr}
	if op == "$nin" {
		return notNode{n}, nil
	}
	return n, nil
}

// compileNot compiles $not with a regex or an operator document.
func compileNot(p path, v bsoncore.Value, depth int) (node, error) {
	switch v.Type {
	case bsoncore.TypeRegex:
		rp, err := newRegexPred(v)
		if err != nil {
			return nil, err
		}
		return notNode{&pathNode{p: p, pred: rp}}, nil
	case bsoncore.TypeEmbeddedDocument:
		it := rawbson.NewIter(v.Data)
		k, _, ok := it.Next()
		if !ok {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "$not cannot be empty")
		}
		if len(k) == 0 || k[0] != '$' {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "unknown operator: %s", string(k))
		}
		n, err := compileOperators(p, v.Data, depth+1)
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	return nil, mongoerr.New(mongoerr.CodeBadValue, "$not needs a regex or a document")
}
