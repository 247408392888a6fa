package server

import (
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/storage"
)

// cmdRenameCollection is {renameCollection: "db.from", to: "db.to",
// dropTarget}, within one database.
func cmdRenameCollection(c *clientConn, req *request, dst []byte) ([]byte, error) {
	fromV := req.body.Index(0).Value()
	toV, err := req.lookupErr("to")
	if fromV.Type != bsoncore.TypeString || err != nil || toV.Type != bsoncore.TypeString {
		return nil, mongoerr.New(mongoerr.CodeTypeMismatch, "'renameCollection' and 'to' must be namespace strings")
	}
	fromDB, fromName, _ := strings.Cut(fromV.StringValue(), ".")
	toDB, toName, _ := strings.Cut(toV.StringValue(), ".")
	if err := checkCollName(fromDB, fromName); err != nil {
		return nil, err
	}
	if err := checkCreateNS(toDB, toName); err != nil {
		return nil, err
	}
	if fromDB != toDB {
		return nil, mongoerr.New(mongoerr.CodeNotImplemented, "minimongod renames collections within one database only")
	}
	coll := c.s.eng.Collection(fromDB, fromName)
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "Source collection %s does not exist", fromV.StringValue())
	}
	if fromName == toName {
		return nil, mongoerr.New(mongoerr.CodeIllegalOperation, "Can't rename a collection to itself")
	}
	if err := c.s.eng.RenameCollection(coll, toName, boolArg(req, "dropTarget")); err != nil {
		if errors.Is(err, storage.ErrExists) {
			return nil, mongoerr.New(mongoerr.CodeNamespaceExists, "target namespace exists")
		}
		return nil, err
	}
	return dst, nil
}

// cmdValidate is {validate: coll}: WiredTiger's verify of the
// collection's and its indexes' tables, with mongod's reply fields.
func cmdValidate(c *clientConn, req *request, dst []byte) ([]byte, error) {
	coll, name, err := c.collection(req)
	if err != nil {
		return nil, err
	}
	if coll == nil {
		return nil, mongoerr.New(mongoerr.CodeNamespaceNotFound, "Collection '%s.%s' does not exist to validate.", req.db, name)
	}
	v, err := c.s.eng.Validate(coll)
	if err != nil {
		return nil, err
	}
	valid := len(v.Errors) == 0 && v.InvalidDocs == 0
	d := bsoncore.AppendStringElement(dst, "ns", coll.NS())
	d = bsoncore.AppendInt64Element(d, "nInvalidDocuments", v.InvalidDocs)
	d = bsoncore.AppendInt64Element(d, "nrecords", v.Records)
	d = bsoncore.AppendInt32Element(d, "nIndexes", int32(len(v.KeysPerIndex)))
	names := append([]string{"_id_"}, indexNames(coll)...)
	ki, d := bsoncore.AppendDocumentElementStart(d, "keysPerIndex")
	for _, n := range names {
		d = bsoncore.AppendInt64Element(d, n, v.KeysPerIndex[n])
	}
	d, _ = bsoncore.AppendDocumentEnd(d, ki)
	di, d := bsoncore.AppendDocumentElementStart(d, "indexDetails")
	for _, n := range names {
		ii, dd := bsoncore.AppendDocumentElementStart(d, n)
		dd = bsoncore.AppendBooleanElement(dd, "valid", v.IndexErrors[n] == "")
		d, _ = bsoncore.AppendDocumentEnd(dd, ii)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, di)
	d = bsoncore.AppendBooleanElement(d, "valid", valid)
	d = appendStrings(d, "warnings", nil)
	d = appendStrings(d, "errors", v.Errors)
	d = appendStrings(d, "extraIndexEntries", nil)
	d = appendStrings(d, "missingIndexEntries", nil)
	return d, nil
}

func indexNames(c *storage.Collection) []string {
	var out []string
	for _, ix := range c.Indexes() {
		out = append(out, ix.Name)
	}
	return out
}

// appendStrings appends an array of strings.
func appendStrings(dst []byte, key string, ss []string) []byte {
	a, d := bsoncore.AppendArrayElementStart(dst, key)
	for i, s := range ss {
		d = bsoncore.AppendStringElement(d, itoa(i), s)
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return d
}
