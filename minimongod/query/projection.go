package query

import (
	"strconv"
	"strings"
	"wtd/minimongod/rawbson"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

// mongod's projection error codes (not in mongoerr).
const (
	codeProjInclusionInExclusion = 31253
	codeProjExclusionInInclusion = 31254
	codeProjPathCollision        = 31249
	codeProjPathCollisionPrefix  = 31250
)

// Projection is a compiled find projection (inclusion or exclusion).
type Projection struct {
	root      *projNode
	inclusion bool
	whole     bool
}

// wholeDocument is the projection of no spec, shared: a compiled
// projection is never changed.
var wholeDocument = &Projection{root: &projNode{}, whole: true}

// projNode is one level of the projection's path tree.
type projNode struct {
	children map[string]*projNode
	leaf     bool
}

// CompileProjection parses a projection. A nil or empty spec keeps whole
// documents. Values must be booleans or numbers (nested documents are read
// as dotted paths); projection operators and computed fields are not
// supported.
func CompileProjection(spec bson.Raw) (*Projection, error) {
	if len(spec) == 0 || len(spec) == 5 {
		return wholeDocument, nil
	}
	p := &Projection{root: &projNode{}}
	fields := map[string]bool{}
	var order []string
	if err := flattenProjection(spec, "", fields, &order); err != nil {
		return nil, err
	}
	if err := p.setMode(fields, order); err != nil {
		return nil, err
	}
	for _, f := range order {
		if fields[f] == p.inclusion {
			if err := p.root.insert(f); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// flattenProjection reads spec into dotted paths and their include flags.
func flattenProjection(spec []byte, prefix string, fields map[string]bool, order *[]string) error {
	it := rawbson.NewIter(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			return nil
		}
		name := prefix + string(k)
		switch {
		case v.Type == bsoncore.TypeBoolean || isNumber(v.Type):
			if _, dup := fields[name]; !dup {
				*order = append(*order, name)
			}
			fields[name] = truthy(v)
		case v.Type == bsoncore.TypeEmbeddedDocument && !isOperatorDoc(v) && len(v.Data) > 5:
			if err := flattenProjection(v.Data, name+".", fields, order); err != nil {
				return err
			}
		default:
			return mongoerr.New(mongoerr.CodeNotImplemented,
				"projection value for field %s is not supported", name)
		}
	}
}

// setMode decides inclusion or exclusion and rejects mixtures.
func (p *Projection) setMode(fields map[string]bool, order []string) error {
	mode, decided := false, false
	for _, f := range order {
		if f == "_id" {
			continue
		}
		inc := fields[f]
		switch {
		case !decided:
			mode, decided = inc, true
		case mode && !inc:
			return mongoerr.New(codeProjExclusionInInclusion,
				"Cannot do exclusion on field %s in inclusion projection", f)
		case !mode && inc:
			return mongoerr.New(codeProjInclusionInExclusion,
				"Cannot do inclusion on field %s in exclusion projection", f)
		}
	}
	if !decided {
		mode = fields["_id"]
	}
	p.inclusion = mode
	if _, ok := fields["_id"]; !ok && mode && !hasPrefix(order, "_id.") {
		return p.root.insert("_id")
	}
	return nil
}

// hasPrefix reports whether any path starts with prefix.
func hasPrefix(order []string, prefix string) bool {
	for _, f := range order {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// insert adds a leaf for the dotted path, rejecting path collisions.
func (n *projNode) insert(dotted string) error {
	comps := strings.Split(dotted, ".")
	cur := n
	for i, c := range comps {
		if cur.leaf {
			return mongoerr.New(codeProjPathCollision, "Path collision at %s remaining portion %s",
				dotted, strings.Join(comps[i:], "."))
		}
		if cur.children == nil {
			cur.children = map[string]*projNode{}
		}
		next, ok := cur.children[c]
		if !ok {
			next = &projNode{}
			cur.children[c] = next
		}
		cur = next
	}
	if len(cur.children) > 0 {
		return mongoerr.New(codeProjPathCollisionPrefix, "Path collision at %s", dotted)
	}
	cur.leaf = true
	return nil
}

// Apply appends the projected document to dst.
func (p *Projection) Apply(dst []byte, doc bson.Raw) []byte {
	if p.whole {
		return append(dst, doc...)
	}
	if p.inclusion {
		return includeDoc(dst, doc, p.root)
	}
	return excludeDoc(dst, doc, p.root)
}

// includeDoc appends doc keeping only the fields in n.
func includeDoc(dst, doc []byte, n *projNode) []byte {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		c := n.children[string(k)]
		switch {
		case c == nil:
		case c.leaf:
			dst = appendElem(dst, k, v)
		case v.Type == bsoncore.TypeEmbeddedDocument:
			dst = appendHeader(dst, v.Type, k)
			dst = includeDoc(dst, v.Data, c)
		case v.Type == bsoncore.TypeArray:
			dst = appendHeader(dst, v.Type, k)
			dst = includeArray(dst, v.Data, c)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// includeArray applies an inclusion subtree to each document in an array;
// scalars are dropped.
func includeArray(dst, arr []byte, n *projNode) []byte {
	idx, dst := bsoncore.AppendArrayStart(dst)
	it := rawbson.NewIter(arr)
	i := 0
	for {
		_, v, ok := it.Next()
		if !ok {
			break
		}
		switch v.Type {
		case bsoncore.TypeEmbeddedDocument:
			dst = appendHeader(dst, v.Type, indexKey(i))
			dst = includeDoc(dst, v.Data, n)
		case bsoncore.TypeArray:
			dst = appendHeader(dst, v.Type, indexKey(i))
			dst = includeArray(dst, v.Data, n)
		default:
			continue
		}
		i++
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst
}

// excludeDoc appends doc without the fields in n.
func excludeDoc(dst, doc []byte, n *projNode) []byte {
	idx, dst := bsoncore.AppendDocumentStart(dst)
	it := rawbson.NewIter(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		c := n.children[string(k)]
		switch {
		case c == nil:
			dst = appendElem(dst, k, v)
		case c.leaf:
		case v.Type == bsoncore.TypeEmbeddedDocument:
			dst = appendHeader(dst, v.Type, k)
			dst = excludeDoc(dst, v.Data, c)
		case v.Type == bsoncore.TypeArray:
			dst = appendHeader(dst, v.Type, k)
			dst = excludeArray(dst, v.Data, c)
		default:
			dst = appendElem(dst, k, v)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst
}

// excludeArray applies an exclusion subtree to each document in an array.
func excludeArray(dst, arr []byte, n *projNode) []byte {
	idx, dst := bsoncore.AppendArrayStart(dst)
	it := rawbson.NewIter(arr)
	for i := 0; ; i++ {
		_, v, ok := it.Next()
		if !ok {
			break
		}
		key := indexKey(i)
		switch v.Type {
		case bsoncore.TypeEmbeddedDocument:
			dst = appendHeader(dst, v.Type, key)
			dst = excludeDoc(dst, v.Data, n)
		case bsoncore.TypeArray:
			dst = appendHeader(dst, v.Type, key)
			dst = excludeArray(dst, v.Data, n)
		default:
			dst = appendElem(dst, key, v)
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, idx)
	return dst
}

// appendHeader appends an element's type byte and key.
func appendHeader[K []byte | string](dst []byte, t bsoncore.Type, key K) []byte {
	dst = append(dst, byte(t))
	dst = append(dst, key...)
	return append(dst, 0)
}

// appendElem appends a whole element.
func appendElem[K []byte | string](dst []byte, key K, v bsoncore.Value) []byte {
	return append(appendHeader(dst, v.Type, key), v.Data...)
}

// smallKeys caches array index keys.
var smallKeys = func() []string {
	k := make([]string, 256)
	for i := range k {
		k[i] = strconv.Itoa(i)
	}
	return k
}()

// indexKey returns the array key for index i.
func indexKey(i int) string {
	if i < len(smallKeys) {
		return smallKeys[i]
	}
	return strconv.Itoa(i)
}
