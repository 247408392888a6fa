package query

import (
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// SortField is one key of a sort specification.
type SortField struct {
	Path string
	Desc bool
}

// Sort is a compiled sort specification.
type Sort struct {
	fields []SortField
	paths  []path
}

// CompileSort parses a sort specification {field: 1 | -1, ...}.
func CompileSort(spec bson.Raw) (*Sort, error) {
	s := &Sort{}
	it := rawbson.NewIter(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			return s, nil
		}
		desc, err := sortDirection(v)
		if err != nil {
			return nil, err
		}
		if len(k) == 0 {
			return nil, mongoerr.New(mongoerr.CodeBadValue, "FieldPath cannot be constructed with empty string")
		}
		s.fields = append(s.fields, SortField{Path: string(k), Desc: desc})
		s.paths = append(s.paths, newPath(string(k)))
	}
}

// sortDirection reads 1 or -1.
func sortDirection(v bsoncore.Value) (bool, error) {
	if isOperatorDoc(v) {
		return false, mongoerr.New(mongoerr.CodeNotImplemented, "$meta sort is not supported")
	}
	if f, ok := toFloat(v); ok && v.Type != bsoncore.TypeDecimal128 {
		switch f {
		case 1:
			return false, nil
		case -1:
			return true, nil
		}
	}
	return false, mongoerr.New(mongoerr.CodeBadValue,
		"$sort key ordering must be 1 (for ascending) or -1 (for descending)")
}

// Fields returns the sort keys in order.
func (s *Sort) Fields() []SortField { return s.fields }

// Compare orders a before b (negative), after (positive) or as equal.
// Missing fields sort as null; an array sorts by its smallest element when
// ascending and its largest when descending; an empty array sorts below
// null.
func (s *Sort) Compare(a, b bson.Raw) int {
	for i, f := range s.fields {
		ka := sortKeyOf(a, s.paths[i], f.Desc)
		kb := sortKeyOf(b, s.paths[i], f.Desc)
		c := ka.compare(kb)
		if f.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortKey is a document's key for one sort field.
type sortKey struct {
	v        bsoncore.Value
	emptyArr bool
	found    bool
}

// compare orders keys; an empty array ranks just above MinKey.
func (k sortKey) compare(o sortKey) int {
	switch {
	case k.emptyArr && o.emptyArr:
		return 0
	case k.emptyArr:
		return emptyVs(o.v)
	case o.emptyArr:
		return -emptyVs(k.v)
	}
	return Compare(k.value(), o.value())
}

// emptyVs compares the empty-array key with v.
func emptyVs(v bsoncore.Value) int {
	if v.Type == bsoncore.TypeMinKey {
		return 1
	}
	return -1
}

// value returns the key's value, null when missing.
func (k sortKey) value() bsoncore.Value {
	if !k.found {
		return nullVal
	}
	return k.v
}

// sortKeyOf extracts the min (ascending) or max (descending) value at p.
func sortKeyOf(doc []byte, p path, desc bool) sortKey {
	e := keyExtractor{p: p, desc: desc}
	e.walk(bsoncore.Value{Type: bsoncore.TypeEmbeddedDocument, Data: doc}, 0)
	return e.best
}

// keyExtractor walks a path collecting candidate sort values.
type keyExtractor struct {
	p    path
	desc bool
	best sortKey
	any  bool
}

// offer considers one candidate key.
func (e *keyExtractor) offer(k sortKey) {
	if !e.any {
		e.best, e.any = k, true
		return
	}
	c := k.compare(e.best)
	if e.desc && c > 0 || !e.desc && c < 0 {
		e.best = k
	}
}

// walk resolves component i of the path in v.
func (e *keyExtractor) walk(v bsoncore.Value, i int) {
	switch v.Type {
	case bsoncore.TypeEmbeddedDocument:
		c, ok := lookupField(v.Data, e.p.comps[i])
		if !ok {
			e.offer(sortKey{})
			return
		}
		e.descend(c, i)
	case bsoncore.TypeArray:
		if idx := e.p.idx[i]; idx >= 0 {
			if c, ok := arrayIndex(v.Data, idx); ok {
				e.descend(c, i)
			}
		}
		it := rawbson.NewIter(v.Data)
		for {
			_, el, ok := it.Next()
			if !ok {
				return
			}
			if el.Type == bsoncore.TypeEmbeddedDocument {
				e.walk(el, i)
			}
		}
	default:
		e.offer(sortKey{})
	}
}

// descend continues below value c found for component i.
func (e *keyExtractor) descend(c bsoncore.Value, i int) {
	if i < len(e.p.comps)-1 {
		e.walk(c, i+1)
		return
	}
	if c.Type != bsoncore.TypeArray {
		e.offer(sortKey{v: c, found: true})
		return
	}
	it := rawbson.NewIter(c.Data)
	n := 0
	for {
		_, el, ok := it.Next()
		if !ok {
			break
		}
		e.offer(sortKey{v: el, found: true})
		n++
	}
	if n == 0 {
		e.offer(sortKey{emptyArr: true})
	}
}
