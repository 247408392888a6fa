package query

import (
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// path is a parsed dotted field path; idx[i] is comps[i] as an array index,
// or -1 when it is not numeric. An empty path denotes the value itself.
type path struct {
	comps []string
	idx   []int
}

// newPath splits a dotted path.
func newPath(s string) path {
	comps := strings.Split(s, ".")
	idx := make([]int, len(comps))
	for i, c := range comps {
		idx[i] = -1
		if n, ok := arrayIdx(c); ok {
			idx[i] = n
		}
	}
	return path{comps: comps, idx: idx}
}

// leafPred is a condition on the value found at the end of a path.
type leafPred interface {
	// matchValue tests one value (no array expansion).
	matchValue(v bsoncore.Value) bool
	// matchMissing tests a path that resolves to no value.
	matchMissing() bool
	// expand reports whether an array at the leaf also matches when one of
	// its elements matches.
	expand() bool
}

// pathNode applies a leaf predicate to the values reachable through a path,
// with mongod's array semantics: a path through an array matches if the
// path matches for any element; a numeric component also indexes arrays.
type pathNode struct {
	p    path
	pred leafPred
}

func (n *pathNode) match(v bsoncore.Value) bool {
	if len(n.p.comps) == 0 {
		return n.pred.matchValue(v)
	}
	return n.walk(v, 0)
}

// walk resolves component i of the path in container v.
func (n *pathNode) walk(v bsoncore.Value, i int) bool {
	switch v.Type {
	case bsoncore.TypeEmbeddedDocument:
		c, ok := lookupField(v.Data, n.p.comps[i])
		if !ok {
			return n.pred.matchMissing()
		}
		return n.descend(c, i)
	case bsoncore.TypeArray:
		return n.walkArray(v, i)
	}
	return n.pred.matchMissing()
}

// descend continues below the value c found for component i.
func (n *pathNode) descend(c bsoncore.Value, i int) bool {
	if i == len(n.p.comps)-1 {
		return n.leaf(c)
	}
	return n.walk(c, i+1)
}

// walkArray resolves component i against each document in an array, and
// as an index when it is numeric.
func (n *pathNode) walkArray(v bsoncore.Value, i int) bool {
	if idx := n.p.idx[i]; idx >= 0 {
		if c, ok := arrayIndex(v.Data, idx); ok && n.descend(c, i) {
			return true
		}
	}
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			return false
		}
		if e.Type == bsoncore.TypeEmbeddedDocument && n.walk(e, i) {
			return true
		}
	}
}

// leaf tests the value at the end of the path.
func (n *pathNode) leaf(v bsoncore.Value) bool {
	if n.pred.matchValue(v) {
		return true
	}
	if v.Type != bsoncore.TypeArray || !n.pred.expand() {
		return false
	}
	it := rawbson.NewIter(v.Data)
	for {
		_, e, ok := it.Next()
		if !ok {
			return false
		}
		if n.pred.matchValue(e) {
			return true
		}
	}
}
