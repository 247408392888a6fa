package server

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// collName returns the collection named by the command's first field.
func collName(req *request) (string, error) {
	v := req.body.Index(0).Value()
	if v.Type != bsoncore.TypeString || v.StringValue() == "" {
		return "", mongoerr.New(mongoerr.CodeInvalidNamespace, "collection name has invalid type %s", typeName(v.Type))
	}
	return v.StringValue(), nil
}

func typeName(t bsoncore.Type) string {
	switch t {
	case bsoncore.TypeDouble:
		return "double"
	case bsoncore.TypeString:
		return "string"
	case bsoncore.TypeEmbeddedDocument:
		return "object"
	case bsoncore.TypeArray:
		return "array"
	case bsoncore.TypeInt32:
		return "int"
	case bsoncore.TypeInt64:
		return "long"
	case bsoncore.TypeBoolean:
		return "bool"
	case bsoncore.TypeNull:
		return "null"
	}
	return t.String()
}

// docArg returns a copy of an optional document field (nil when absent or
// null). It is a copy because compiled filters and projections may outlive
// the request buffer in a cursor.
func docArg(req *request, name string) (bson.Raw, error) {
	v, err := req.lookupErr(name)
	if err != nil || v.Type == bsoncore.TypeNull {
		return nil, nil
	}
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'object'", req.name, name, typeName(v.Type))
	}
	return append(bson.Raw(nil), v.Document()...), nil
}

// intArg returns an optional integer field.
func intArg(req *request, name string, def int64) (int64, error) {
	v, err := req.lookupErr(name)
	if err != nil || v.Type == bsoncore.TypeNull {
		return def, nil
	}
	if n, ok := v.AsInt64OK(); ok {
		return n, nil
	}
	if f, ok := v.AsFloat64OK(); ok {
		return int64(f), nil
	}
	return 0, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected types '[long, int, decimal, double']", req.name, name, typeName(v.Type))
}

func boolArg(req *request, name string) bool {
	v, err := req.lookupErr(name)
	if err != nil {
		return false
	}
	switch v.Type {
	case bsoncore.TypeBoolean:
		return v.Boolean()
	case bsoncore.TypeInt32, bsoncore.TypeInt64, bsoncore.TypeDouble:
		f, _ := v.AsFloat64OK()
		return f != 0
	}
	return false
}

// docsArg returns the documents of an array field or of the OP_MSG
// document sequence with that name.
func docsArg(req *request, name string) ([]bson.Raw, error) {
	for _, s := range req.seqs {
		if s.Identifier == name {
			return s.Docs, nil
		}
	}
	v, err := req.lookupErr(name)
	if err != nil {
		return nil, mongoerr.New(mongoerr.CodeFailedToParse, "BSON field '%s.%s' is missing but a required field", req.name, name)
	}
	if v.Type != bsoncore.TypeArray {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'array'", req.name, name, typeName(v.Type))
	}
	vals, err := v.Array().Values()
	if err != nil {
		return nil, err
	}
	out := make([]bson.Raw, 0, len(vals))
	for _, el := range vals {
		if el.Type != bsoncore.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type 'object'", req.name, name, typeName(el.Type))
		}
		out = append(out, bson.Raw(el.Document()))
	}
	return out, nil
}

// collection returns the named collection or nil when it does not exist.
func (c *clientConn) collection(req *request) (*storage.Collection, string, error) {
	name, err := collName(req)
	if err != nil {
		return nil, "", err
	}
	return c.s.eng.Collection(req.db, name), name, nil
}

// sortArg compiles an optional sort document; nil when absent or empty.
func sortArg(req *request, name string) (*query.Sort, error) {
	spec, err := docArg(req, name)
	if err != nil {
		return nil, err
	}
	return compileSort(spec)
}

// compileSort compiles spec, or returns nil for no sort ({} or absent).
func compileSort(spec bson.Raw) (*query.Sort, error) {
	if len(spec) <= 5 {
		return nil, nil
	}
	return query.CompileSort(spec)
}
