package server

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/storage"
)

// profileCollection is where the profiler writes, in each database.
const profileCollection = "system.profile"

// maxNamespaceLen is the longest "db.collection" mongod 4.4 accepts.
const maxNamespaceLen = 255

// maxDBNameLen is the longest database name mongod accepts.
const maxDBNameLen = 63

// checkDBName refuses, as mongod refuses any command on it, a database
// name that is empty, longer than maxDBNameLen bytes or holds a character
// mongod does not allow ('$' is allowed here; names to write to are
// checked further by checkCollName).
func checkDBName(db string) error {
	if db == "" || len(db) > maxDBNameLen || strings.ContainsAny(db, "/\\. \"\x00") {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "Invalid database name: '%s'", db)
	}
	return nil
}

// checkCollName checks db and collection names as mongod does.
func checkCollName(db, name string) error {
	if db == "" || len(db) > maxDBNameLen || strings.ContainsAny(db, "/\\. \"$") {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "Invalid database name: '%s'", db)
	}
	if name == "" || strings.Contains(name, "$") || strings.HasPrefix(name, ".") || strings.ContainsRune(name, 0) {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "Invalid collection name: %s", name)
	}
	if ns := db + "." + name; len(ns) > maxNamespaceLen {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "Fully qualified namespace is too long. Namespace: %s Max: %d", ns, maxNamespaceLen)
	}
	return nil
}

// isSystem reports whether name is in the reserved system.* space.
func isSystem(name string) bool { return strings.HasPrefix(name, "system.") }

// legalClientSystem lists the system collections clients may create and
// write (mongod's isLegalClientSystemNS).
var legalClientSystem = map[string]bool{"system.js": true}

// checkCreateNS checks a collection to be created explicitly (create).
func checkCreateNS(db, name string) error {
	if err := checkCollName(db, name); err != nil {
		return err
	}
	if isSystem(name) && !legalClientSystem[name] && name != profileCollection {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "Invalid system namespace: %s.%s", db, name)
	}
	return nil
}

// checkWriteNS checks a collection a client writes to.
func checkWriteNS(db, name string) error {
	if err := checkCollName(db, name); err != nil {
		return err
	}
	if isSystem(name) && !legalClientSystem[name] {
		return mongoerr.New(mongoerr.CodeInvalidNamespace, "cannot write to '%s.%s'", db, name)
	}
	return nil
}

// ensureCollection returns db.name for a write, creating it when missing
// after checking the namespace.
func (c *clientConn) ensureCollection(db, name string) (*storage.Collection, error) {
	if err := checkWriteNS(db, name); err != nil {
		return nil, err
	}
	return c.s.eng.EnsureCollection(db, name)
}

// checkTopLevelFields refuses, as mongod does, a document to insert with
// a $-prefixed top-level field name, an _id that is an array, a regex or
// undefined, or two _id fields; hasID reports whether it has one.
func checkTopLevelFields(doc bson.Raw) (hasID bool, err error) {
	// One walk over the top-level elements, with no allocation: this runs
	// for every inserted document.
	n, rest, ok := bsoncore.ReadLength(doc)
	if !ok || n < 5 || int(n) > len(doc) {
		return false, mongoerr.New(mongoerr.CodeInvalidBSON, "invalid document: corrupted top-level element")
	}
	rest = rest[:n-5]
	for len(rest) > 0 {
		el, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return false, mongoerr.New(mongoerr.CodeInvalidBSON, "invalid document: corrupted top-level element")
		}
		k := el.KeyBytes()
		if len(k) > 0 && k[0] == '$' {
			return false, mongoerr.New(mongoerr.CodeBadValue, "Document can't have $ prefixed field names: %s", k)
		}
		if string(k) == "_id" {
			if err := checkIDType(bsoncore.Type(el[0])); err != nil {
				return false, err
			}
			if hasID {
				return false, mongoerr.New(mongoerr.CodeBadValue, "can't have multiple _id fields in one document")
			}
			hasID = true
		}
		rest = r
	}
	return hasID, nil
}

// checkIDType refuses the _id types mongod does not store.
func checkIDType(t bsoncore.Type) error {
	switch t {
	case bsoncore.TypeArray, bsoncore.TypeRegex, bsoncore.TypeUndefined:
		return mongoerr.New(mongoerr.CodeInvalidIDField, "The '_id' value cannot be of type %s", typeName(t))
	}
	return nil
}
