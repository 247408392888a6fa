package query

import (
	"math"
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Predicate is a condition on one path, implied by the filter (a superset:
// every matching document satisfies it), that an index on that single path
// can serve. At most one form is set: Eq, else In (sorted by Compare, no
// duplicates of null/regex/arrays), else the range [Lower, Upper]. Ranges
// are confined to the operand's type bracket (e.g. $gt: 5 gives
// (5, +Inf]). A zero Lower/Upper (Type 0) means unbounded.
//
// Lower and Upper may come from different operators on the path; on a
// multikey index (array values) only one side of such a range is a sound
// bound, because different elements may satisfy each side.
type Predicate struct {
	Path           string
	Eq             *bsoncore.Value
	In             []bsoncore.Value
	Lower, Upper   bsoncore.Value
	LowerInclusive bool
	UpperInclusive bool
}

// IsRange reports whether p is a range predicate.
func (p Predicate) IsRange() bool {
	return p.Eq == nil && p.In == nil && (p.Lower.Type != 0 || p.Upper.Type != 0)
}

// Predicates returns the index-usable conditions that are AND-ed at the top
// level of the filter (including inside top-level $and), one per path in
// order of first appearance.
func (m *Matcher) Predicates() []Predicate { return m.preds }

// IDEquality returns the _id value when the filter is exactly {_id: v} or
// {_id: {$eq: v}} with v not a document, array or regex.
func (m *Matcher) IDEquality() (bsoncore.Value, bool) { return m.idEq, m.idOK }

// predSet accumulates predicates per path.
type predSet struct {
	order []string
	m     map[string]*Predicate
}

// derivePredicates computes the planner predicates for a filter.
func derivePredicates(filter []byte) []Predicate {
	s := predSet{m: map[string]*Predicate{}}
	s.addDoc(filter, 0)
	var out []Predicate
	for _, p := range s.order {
		pr := s.m[p]
		if pr.Eq != nil || pr.In != nil || pr.IsRange() {
			out = append(out, *pr)
		}
	}
	return out
}

// get returns the predicate for path, creating it.
func (s *predSet) get(path string) *Predicate {
	if p, ok := s.m[path]; ok {
		return p
	}
	p := &Predicate{Path: path}
	s.m[path] = p
	s.order = append(s.order, path)
	return p
}

// addDoc adds the conditions of a filter document.
func (s *predSet) addDoc(doc []byte, depth int) {
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		key := string(k)
		switch {
		case key == "$and" && v.Type == bsoncore.TypeArray && depth < maxFilterDepth:
			s.addAnd(v.Data, depth)
		case strings.HasPrefix(key, "$"):
		case isOperatorDoc(v):
			s.addOps(key, v.Data)
		case eqIndexable(v):
			s.addEq(key, v)
		}
	}
}

// addAnd adds every clause of a $and array.
func (s *predSet) addAnd(arr []byte, depth int) {
	it := rawbson.NewIter(arr)
	for {
		_, e, ok := it.Next()
		if !ok {
			return
		}
		if e.Type == bsoncore.TypeEmbeddedDocument {
			s.addDoc(e.Data, depth+1)
		}
	}
}

// addOps adds the indexable operators of an operator document.
func (s *predSet) addOps(path string, ops []byte) {
	it := rawbson.NewIter(ops)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		switch string(k) {
		case "$eq":
			if eqIndexable(v) {
				s.addEq(path, v)
			}
		case "$in":
			s.addIn(path, v)
		case "$gt":
			s.addRange(path, opGt, v)
		case "$gte":
			s.addRange(path, opGte, v)
		case "$lt":
			s.addRange(path, opLt, v)
		case "$lte":
			s.addRange(path, opLte, v)
		}
	}
}

// eqIndexable reports whether equality with v is exactly an index point:
// not null (matches missing), not an array (matches elements or whole), not
// a regex (pattern match).
func eqIndexable(v bsoncore.Value) bool {
	switch v.Type {
	case bsoncore.TypeArray, bsoncore.TypeNull, bsoncore.TypeUndefined, bsoncore.TypeRegex, 0:
		return false
	}
	return !isOperatorDoc(v)
}

// addEq records an equality; it supersedes any In or range on the path.
func (s *predSet) addEq(path string, v bsoncore.Value) {
	p := s.get(path)
	if p.Eq != nil {
		return
	}
	val := v
	*p = Predicate{Path: path, Eq: &val}
}

// addIn records an $in whose members are all index points.
func (s *predSet) addIn(path string, v bsoncore.Value) {
	if v.Type != bsoncore.TypeArray {
		return
	}
	pr, err := newInPred(v.Data)
	if err != nil || len(pr.regexes) > 0 || len(pr.vals) == 0 {
		return
	}
	var vals []bsoncore.Value
	for _, e := range pr.vals {
		if !eqIndexable(e) {
			return
		}
		if len(vals) == 0 || Compare(vals[len(vals)-1], e) != 0 {
			vals = append(vals, e)
		}
	}
	p := s.get(path)
	if p.Eq != nil || p.In != nil {
		return
	}
	*p = Predicate{Path: path, In: vals}
}

// addRange narrows the path's range with one comparison operator.
func (s *predSet) addRange(path string, op cmpOp, v bsoncore.Value) {
	if isNaN(v) {
		if op == opGte || op == opLte {
			s.addEq(path, v)
		}
		return
	}
	lo, hi, loIncl, hiIncl, ok := bracketBounds(v)
	if !ok {
		return
	}
	switch op {
	case opGt, opGte:
		lo, loIncl = v, op == opGte
	default:
		hi, hiIncl = v, op == opLte
	}
	p := s.get(path)
	if p.Eq != nil || p.In != nil {
		return
	}
	if p.Lower.Type == 0 || tighter(lo, loIncl, p.Lower, p.LowerInclusive, 1) {
		p.Lower, p.LowerInclusive = lo, loIncl
	}
	if p.Upper.Type == 0 || tighter(hi, hiIncl, p.Upper, p.UpperInclusive, -1) {
		p.Upper, p.UpperInclusive = hi, hiIncl
	}
}

// tighter reports whether bound a is stricter than b; dir is +1 for lower
// bounds and -1 for upper bounds.
func tighter(a bsoncore.Value, aIncl bool, b bsoncore.Value, bIncl bool, dir int) bool {
	c := Compare(a, b) * dir
	return c > 0 || c == 0 && !aIncl && bIncl
}

// bracketBounds returns the extreme values of v's canonical type bracket.
func bracketBounds(v bsoncore.Value) (lo, hi bsoncore.Value, loIncl, hiIncl bool, ok bool) {
	switch CanonicalType(v.Type) {
	case CanonicalType(bsoncore.TypeDouble):
		return doubleVal(math.Inf(-1)), doubleVal(math.Inf(1)), true, true, true
	case CanonicalType(bsoncore.TypeString):
		return strVal(""), emptyDoc(bsoncore.TypeEmbeddedDocument), true, false, true
	case CanonicalType(bsoncore.TypeEmbeddedDocument):
		return emptyDoc(bsoncore.TypeEmbeddedDocument), emptyDoc(bsoncore.TypeArray), true, false, true
	case CanonicalType(bsoncore.TypeBinary):
		return bsoncore.Value{Type: bsoncore.TypeBinary, Data: bsoncore.AppendBinary(nil, 0, nil)},
			oidVal(0), true, false, true
	case CanonicalType(bsoncore.TypeObjectID):
		return oidVal(0), oidVal(0xff), true, true, true
	case CanonicalType(bsoncore.TypeBoolean):
		return boolVal(false), boolVal(true), true, true, true
	case CanonicalType(bsoncore.TypeDateTime):
		return dateVal(math.MinInt64), dateVal(math.MaxInt64), true, true, true
	case CanonicalType(bsoncore.TypeTimestamp):
		return bsoncore.Value{Type: bsoncore.TypeTimestamp, Data: bsoncore.AppendTimestamp(nil, 0, 0)},
			bsoncore.Value{Type: bsoncore.TypeTimestamp, Data: bsoncore.AppendTimestamp(nil, math.MaxUint32, math.MaxUint32)},
			true, true, true
	}
	return lo, hi, false, false, false
}

func strVal(s string) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeString, Data: bsoncore.AppendString(nil, s)}
}

func emptyDoc(t bsoncore.Type) bsoncore.Value {
	return bsoncore.Value{Type: t, Data: []byte{5, 0, 0, 0, 0}}
}

func oidVal(fill byte) bsoncore.Value {
	var id [12]byte
	for i := range id {
		id[i] = fill
	}
	return bsoncore.Value{Type: bsoncore.TypeObjectID, Data: id[:]}
}

func boolVal(b bool) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeBoolean, Data: bsoncore.AppendBoolean(nil, b)}
}

func dateVal(ms int64) bsoncore.Value {
	return bsoncore.Value{Type: bsoncore.TypeDateTime, Data: bsoncore.AppendDateTime(nil, ms)}
}

// deriveIDEquality recognises {_id: v} and {_id: {$eq: v}}.
func deriveIDEquality(filter []byte) (bsoncore.Value, bool) {
	it := rawbson.NewIter(filter)
	k, v, ok := it.Next()
	if !ok || string(k) != "_id" {
		return bsoncore.Value{}, false
	}
	if _, _, more := it.Next(); more {
		return bsoncore.Value{}, false
	}
	if isOperatorDoc(v) {
		ops := rawbson.NewIter(v.Data)
		op, ov, _ := ops.Next()
		if _, _, more := ops.Next(); more || string(op) != "$eq" {
			return bsoncore.Value{}, false
		}
		v = ov
	}
	switch v.Type {
	case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray, bsoncore.TypeRegex:
		return bsoncore.Value{}, false
	}
	return v, true
}
