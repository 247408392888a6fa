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

// checkCollName checks db and collection names as mongod does.
func checkCollName(db, name string) error {
	if db == "" || strings.ContainsAny(db, "/\\. \"$") {
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

// checkTopLevelFields refuses $-prefixed top-level field names in a
// document to insert, as mongod does.
func checkTopLevelFields(doc bson.Raw) error {
	// One walk over the top-level elements, with no allocation: this runs
	// for every inserted document.
	n, rest, ok := bsoncore.ReadLength(doc)
	if !ok || n < 5 || int(n) > len(doc) {
		return mongoerr.New(mongoerr.CodeInvalidBSON, "invalid document: corrupted top-level element")
	}
	rest = rest[:n-5]
	for len(rest) > 0 {
		el, r, ok := bsoncore.ReadElement(rest)
		if !ok {
			return mongoerr.New(mongoerr.CodeInvalidBSON, "invalid document: corrupted top-level element")
		}
		if k := el.KeyBytes(); len(k) > 0 && k[0] == '$' {
			return mongoerr.New(mongoerr.CodeBadValue, "Document can't have $ prefixed field names: %s", k)
		}
		rest = r
	}
	return nil
}
