package server

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/storage"
)

// cmdCollMod changes collection options; minimongod supports changing a
// TTL index's expireAfterSeconds: {collMod, index: {name | keyPattern,
// expireAfterSeconds}}.
func cmdCollMod(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "ns does not exist: %s.%s", req.db, name)
	}
	elems, _ := req.body.Elements()
	for _, el := range elems[1:] {
		if el.Key() != "index" && !genericArgs[el.Key()] {
			return nil, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod's collMod supports only index.expireAfterSeconds, not %q", el.Key())
		}
	}
	v, err := req.lookupErr("index")
	if err != nil {
		return dst, nil
	}
	if v.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "BSON field 'collMod.index' is the wrong type '%s', expected type 'object'", typeName(v.Type))
	}
	return collModIndex(c, coll, v.Document(), dst)
}

// collModIndex applies {name | keyPattern, expireAfterSeconds}.
func collModIndex(c *clientConn, coll *storage.Collection, spec bsoncore.Document, dst []byte) ([]byte, error) {
	ix, err := findModIndex(coll, spec)
	if err != nil {
		return nil, err
	}
	ev, err := spec.LookupErr("expireAfterSeconds")
	if err != nil {
		return dst, nil
	}
	secs, ok := ev.AsInt64OK()
	if !ok {
		f, fok := ev.AsFloat64OK()
		if !fok {
			return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "expireAfterSeconds must be a number")
		}
		secs = int64(f)
	}
	if secs < 0 {
		return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "TTL index 'expireAfterSeconds' option must be numeric and non-negative, but received: %s", ev.String())
	}
	if ix.ExpireAfterSeconds == nil {
		return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "no expireAfterSeconds field to update")
	}
	old, err := c.s.eng.SetExpireAfterSeconds(coll, ix.Name, secs)
	if err != nil {
		return nil, err
	}
	dst = bsoncore.AppendInt64Element(dst, "expireAfterSeconds_old", old)
	return bsoncore.AppendInt64Element(dst, "expireAfterSeconds_new", secs), nil
}

// findModIndex finds the index a collMod names by name or key pattern.
func findModIndex(coll *storage.Collection, spec bsoncore.Document) (*storage.Index, error) {
	if nv, err := spec.LookupErr("name"); err == nil && nv.Type == bsoncore.TypeString {
		if ix := coll.Index(nv.StringValue()); ix != nil {
			return ix, nil
		}
		return nil, mongoerr.New(mongoerr.CodeIndexNotFound, "cannot find index %s for ns %s", nv.StringValue(), coll.NS())
	}
	kv, err := spec.LookupErr("keyPattern")
	if err != nil || kv.Type != bsoncore.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.CodeInvalidOptions, "must specify either index name or key pattern")
	}
	for _, ix := range coll.Indexes() {
		if string(ix.KeyPattern()) == string(kv.Document()) {
			return ix, nil
		}
	}
	return nil, mongoerr.New(mongoerr.CodeIndexNotFound, "cannot find index %s for ns %s", storage.ShellString(bson.Raw(kv.Document())), coll.NS())
}
