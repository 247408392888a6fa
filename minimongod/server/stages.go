package server

import (
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
)

// compileAddFields is $addFields (and its alias $set): top-level fields
// set to constants or "$path" values, replaced in place or appended. A
// path a document lacks leaves the field out, as in mongod.
func compileAddFields(v bsoncore.Value) (stage, error) {
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(40272, "$addFields specification stage must be an object, got %s", typeName(v.Type))
	}
	fields, _ := v.Document().Elements()
	for _, f := range fields {
		if strings.Contains(f.Key(), ".") || strings.HasPrefix(f.Key(), "$") {
			return nil, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod's $addFields sets top-level fields only, not '%s'", f.Key())
		}
	}
	return func(docs [][]byte) ([][]byte, error) {
		for i, d := range docs {
			vals := make(map[string]bsoncore.Value, len(fields))
			for _, f := range fields {
				vals[f.Key()] = addedValue(d, f.Value())
			}
			docs[i] = setTopLevel(d, fields, vals)
		}
		return docs, nil
	}, nil
}

// addedValue is what $addFields sets a field to: a constant, or the value
// at "$path" in doc (zero, no value, when doc has none).
func addedValue(doc []byte, expr bsoncore.Value) bsoncore.Value {
	if expr.Type == bsoncore.TypeString && strings.HasPrefix(expr.StringValue(), "$") {
		v, _ := query.Lookup(doc, expr.StringValue()[1:])
		return v
	}
	return expr
}

// setTopLevel returns doc with the fields set to vals: existing ones in
// place, new ones after, in the order of fields. A zero value (no type)
// removes the field.
func setTopLevel(doc []byte, fields []bsoncore.Element, vals map[string]bsoncore.Value) []byte {
	elems, _ := bsoncore.Document(doc).Elements()
	done := map[string]bool{}
	idx, out := bsoncore.AppendDocumentStart(nil)
	for _, el := range elems {
		if v, ok := vals[el.Key()]; ok {
			if v.Type != 0 {
				out = bsoncore.AppendValueElement(out, el.Key(), v)
			}
			done[el.Key()] = true
			continue
		}
		out = append(out, el...)
	}
	for _, f := range fields {
		if v := vals[f.Key()]; !done[f.Key()] && v.Type != 0 {
			out = bsoncore.AppendValueElement(out, f.Key(), v)
		}
		done[f.Key()] = true
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// compileUnwind is $unwind: "$path" or {path, includeArrayIndex,
// preserveNullAndEmptyArrays}, on a top-level field.
func compileUnwind(v bsoncore.Value) (stage, error) {
	var path, indexField string
	preserve := false
	switch v.Type {
	case bsoncore.TypeString:
		path = v.StringValue()
	case bsoncore.TypeEmbeddedDocument:
		spec := v.Document()
		if p, err := spec.LookupErr("path"); err == nil && p.Type == bsoncore.TypeString {
			path = p.StringValue()
		}
		if f, err := spec.LookupErr("includeArrayIndex"); err == nil && f.Type == bsoncore.TypeString {
			indexField = f.StringValue()
		}
		if p, err := spec.LookupErr("preserveNullAndEmptyArrays"); err == nil {
			preserve = truthy(p)
		}
	default:
		return nil, mongoerr.New(15981, "expected either a string or an object as specification for $unwind stage, got %s", typeName(v.Type))
	}
	if !strings.HasPrefix(path, "$") {
		return nil, mongoerr.New(28818, "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	field := path[1:]
	if strings.Contains(field, ".") {
		return nil, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod's $unwind takes a top-level field, not '%s'", field)
	}
	one := func(name string) []bsoncore.Element {
		return []bsoncore.Element{bsoncore.Element(bsoncore.AppendNullElement(nil, name))}
	}
	return func(docs [][]byte) ([][]byte, error) {
		var out [][]byte
		for _, d := range docs {
			val, ok := query.Lookup(d, field)
			set := func(v bsoncore.Value, i bsoncore.Value) {
				fields, vals := one(field), map[string]bsoncore.Value{field: v}
				if indexField != "" {
					fields = append(fields, one(indexField)...)
					vals[indexField] = i
				}
				out = append(out, setTopLevel(d, fields, vals))
			}
			null := bsoncore.Value{Type: bsoncore.TypeNull}
			switch {
			case ok && val.Type == bsoncore.TypeArray:
				elems, _ := val.Array().Values()
				for i, e := range elems {
					set(e, bsoncore.Value{Type: bsoncore.TypeInt64, Data: bsoncore.AppendInt64(nil, int64(i))})
				}
				if len(elems) == 0 && preserve {
					out = append(out, removeField(d, field))
				}
			case ok && val.Type != bsoncore.TypeNull:
				set(val, null)
			case preserve:
				out = append(out, d)
			}
		}
		return out, nil
	}, nil
}

// removeField returns doc without its top-level field name.
func removeField(doc []byte, name string) []byte {
	elems, _ := bsoncore.Document(doc).Elements()
	idx, out := bsoncore.AppendDocumentStart(nil)
	for _, el := range elems {
		if el.Key() != name {
			out = append(out, el...)
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out
}

// collStatsDoc is the one document a leading $collStats stage yields:
// ns, host, localTime and, as asked, storageStats and count.
func (c *clientConn) collStatsDoc(db, name string, spec bsoncore.Document) ([]byte, error) {
	coll := c.s.eng.Collection(db, name)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [%s.%s] not found.", db, name)
	}
	unlock, err := c.lockStorage(readTicket)
	if err != nil {
		return nil, err
	}
	defer unlock()
	d := bsoncore.AppendStringElement(nil, "ns", coll.NS())
	d = bsoncore.AppendStringElement(d, "host", hostname())
	d = appendDate(d, "localTime", time.Now())
	if _, err := spec.LookupErr("storageStats"); err == nil {
		si, dd := bsoncore.AppendDocumentElementStart(d, "storageStats")
		dd = c.appendCollStats(dd, coll, 1)
		d, _ = bsoncore.AppendDocumentEnd(dd, si)
	}
	if _, err := spec.LookupErr("count"); err == nil {
		d = bsoncore.AppendInt64Element(d, "count", coll.Count())
	}
	return bsoncore.BuildDocument(nil, d), nil
}
