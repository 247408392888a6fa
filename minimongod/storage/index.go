package storage

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

// IndexField is one field of an index key pattern.
type IndexField struct {
	Path string
	Desc bool
}

// Index is a secondary index: a table whose keys are the encoded field
// values followed (unless unique) by the document's table key, and whose
// values are the table key.
type Index struct {
	Name   string
	Fields []IndexField
	Unique bool
	// ExpireAfterSeconds is set for TTL indexes.
	ExpireAfterSeconds *int64
	Spec               bson.Raw // as given to createIndexes, normalised
	Ident              string
	multikey           atomic.Bool
}

// URI returns the index's WiredTiger table.
func (ix *Index) URI() string { return "table:" + ix.Ident }

// KeyPattern returns the index's key document, e.g. {a: 1}.
func (ix *Index) KeyPattern() bson.Raw {
	return bson.Raw(bsoncore.Document(ix.Spec).Lookup("key").Document())
}

// parseIndexSpec reads a createIndexes spec {key, name, unique,
// expireAfterSeconds, ...}.
func parseIndexSpec(spec bson.Raw) (*Index, error) {
	doc := bsoncore.Document(spec)
	ix := &Index{Spec: spec}
	keyv, err := doc.LookupErr("key")
	if err != nil || keyv.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "The 'key' field is a required property of an index specification")
	}
	elems, _ := keyv.Document().Elements()
	if len(elems) == 0 {
		return nil, mongoerr.New(mongoerr.CodeCannotCreateIndex, "Index keys cannot be empty.")
	}
	for _, el := range elems {
		f := IndexField{Path: el.Key()}
		v := el.Value()
		switch {
		case v.IsNumber():
			n, _ := v.AsFloat64OK()
			if n == 0 {
				return nil, mongoerr.New(mongoerr.CodeCannotCreateIndex, "Values in the index key pattern can't be all zeros")
			}
			f.Desc = n < 0
		case v.Type == bsoncore.TypeString:
			return nil, mongoerr.New(mongoerr.CodeCannotCreateIndex, "minimongod does not support %q indexes (field %s); only ascending and descending fields", v.StringValue(), el.Key())
		default:
			return nil, mongoerr.New(mongoerr.CodeCannotCreateIndex, "Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", typeName(v.Type))
		}
		ix.Fields = append(ix.Fields, f)
	}
	if v, err := doc.LookupErr("name"); err == nil && v.Type == bsoncore.TypeString {
		ix.Name = v.StringValue()
	} else {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "The 'name' field is a required property of an index specification")
	}
	if v, err := doc.LookupErr("unique"); err == nil {
		ix.Unique = v.Boolean()
	}
	if v, err := doc.LookupErr("expireAfterSeconds"); err == nil {
		n, ok := v.AsInt64OK()
		if !ok {
			if f, fok := v.AsFloat64OK(); fok {
				n, ok = int64(f), true
			}
		}
		if !ok || n < 0 {
			return nil, mongoerr.New(mongoerr.CodeCannotCreateIndex, "TTL index 'expireAfterSeconds' option must be numeric and non-negative, but received: %s", v.String())
		}
		ix.ExpireAfterSeconds = &n
	}
	return ix, nil
}

func typeName(t bsoncore.Type) string { return t.String() }

// DefaultIndexName is mongod's generated name: "a_1_b_-1".
func DefaultIndexName(key bson.Raw) string {
	elems, _ := bsoncore.Document(key).Elements()
	parts := make([]string, 0, 2*len(elems))
	for _, el := range elems {
		v := el.Value()
		var s string
		if v.Type == bsoncore.TypeString {
			s = v.StringValue()
		} else {
			s = strings.TrimSuffix(strings.TrimSuffix(v.String(), ".0"), "")
			if i, ok := v.AsInt64OK(); ok {
				s = fmt.Sprint(i)
			}
		}
		parts = append(parts, el.Key(), s)
	}
	return strings.Join(parts, "_")
}

// keys returns the encoded index keys of doc (several for array fields),
// without the table-key suffix.
func (ix *Index) keys(doc bson.Raw) ([][]byte, error) {
	out := [][]byte{nil}
	arrayField := ""
	for _, f := range ix.Fields {
		vals, isArray := pathValues(bsoncore.Document(doc), f.Path)
		if isArray {
			ix.multikey.Store(true)
			if arrayField != "" {
				return nil, mongoerr.New(171, "cannot index parallel arrays [%s] [%s]", lastPart(f.Path), lastPart(arrayField))
			}
			arrayField = f.Path
		}
		next := make([][]byte, 0, len(out)*len(vals))
		for _, prefix := range out {
			for _, v := range vals {
				k := append(append([]byte(nil), prefix...), keyenc.Append(nil, v)...)
				next = append(next, k)
			}
		}
		out = next
	}
	return dedupe(out), nil
}

func lastPart(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func dedupe(keys [][]byte) [][]byte {
	if len(keys) < 2 {
		return keys
	}
	out := keys[:0]
	for i, k := range keys {
		dup := false
		for _, o := range keys[:i] {
			if bytes.Equal(o, k) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, k)
		}
	}
	return out
}

var nullValue = bsoncore.Value{Type: bsoncore.TypeNull}

// pathValues returns the values an index holds for path in doc: the value,
// each element of an array on the way (mongod's multikey rule), or null
// when missing. isArray reports whether an array was expanded.
func pathValues(doc bsoncore.Document, path string) (vals []bsoncore.Value, isArray bool) {
	head, rest, dotted := strings.Cut(path, ".")
	v, err := doc.LookupErr(head)
	if err != nil {
		return []bsoncore.Value{nullValue}, false
	}
	if !dotted {
		if v.Type == bsoncore.TypeArray {
			elems, _ := v.Array().Values()
			if len(elems) == 0 {
				return []bsoncore.Value{{Type: bsoncore.TypeUndefined}}, true
			}
			return elems, true
		}
		return []bsoncore.Value{v}, false
	}
	switch v.Type {
	case bsoncore.TypeEmbeddedDocument:
		return pathValues(v.Document(), rest)
	case bsoncore.TypeArray:
		elems, _ := v.Array().Values()
		var out []bsoncore.Value
		for _, el := range elems {
			if el.Type == bsoncore.TypeEmbeddedDocument {
				sub, _ := pathValues(el.Document(), rest)
				out = append(out, sub...)
			}
		}
		if len(out) == 0 {
			out = []bsoncore.Value{nullValue}
		}
		return out, true
	}
	return []bsoncore.Value{nullValue}, false
}

func (ix *Index) entryKey(k, pk []byte) []byte {
	if ix.Unique {
		return k
	}
	return append(append(make([]byte, 0, len(k)+len(pk)), k...), pk...)
}

func (ix *Index) insertEntries(s *Session, c *Collection, doc bson.Raw, pk []byte) error {
	keys, err := ix.keys(doc)
	if err != nil {
		return err
	}
	cur, err := s.ws.Cursor(ix.URI(), !ix.Unique)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := cur.Insert(ix.entryKey(k, pk), pk); err != nil {
			if wt.IsDuplicateKey(err) {
				return duplicateIndexKey(c, ix, doc, k)
			}
			return err
		}
	}
	return nil
}

func (ix *Index) removeEntries(s *Session, doc bson.Raw, pk []byte) error {
	keys, err := ix.keys(doc)
	if err != nil {
		return err
	}
	cur, err := s.ws.Cursor(ix.URI(), true)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := cur.Remove(ix.entryKey(k, pk)); err != nil && err != wt.ErrNotFound {
			return err
		}
	}
	return nil
}

func (ix *Index) updateEntries(s *Session, c *Collection, old, new bson.Raw, pk []byte) error {
	oldKeys, err := ix.keys(old)
	if err != nil {
		return err
	}
	newKeys, err := ix.keys(new)
	if err != nil {
		return err
	}
	if sameKeys(oldKeys, newKeys) {
		return nil
	}
	if err := ix.removeEntries(s, old, pk); err != nil {
		return err
	}
	return ix.insertEntries(s, c, new, pk)
}

func sameKeys(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Multikey reports whether the index may hold several entries for one
// document (an array on an indexed path).
func (ix *Index) Multikey() bool { return ix.multikey.Load() }
