package storage

import (
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

// Collection is one collection: a table keyed by the encoded _id whose
// values are BSON documents, and its secondary indexes.
type Collection struct {
	e       *Engine
	DB      string
	Name    string
	Ident   string
	Options bson.Raw
	uri     string // "table:" + Ident, set by newCollection

	indexes    []*Index // secondary indexes; _id is the table itself
	numRecords atomic.Int64
	dataSize   atomic.Int64
}

// NS returns "db.name".
func (c *Collection) NS() string { return c.DB + "." + c.Name }

// newCollection returns the collection db.name stored in table ident.
func newCollection(e *Engine, db, name, ident string, options bson.Raw) *Collection {
	return &Collection{e: e, DB: db, Name: name, Ident: ident, Options: options, uri: "table:" + ident}
}

// URI returns the collection's WiredTiger table.
func (c *Collection) URI() string {
	if c.uri != "" {
		return c.uri
	}
	return "table:" + c.Ident
}

// Count returns the number of documents.
func (c *Collection) Count() int64 { return c.numRecords.Load() }

// DataSize returns the total size of the documents in bytes.
func (c *Collection) DataSize() int64 { return c.dataSize.Load() }

// Indexes returns the secondary indexes (the _id index is implicit).
func (c *Collection) Indexes() []*Index { return c.indexes }

// Index returns the secondary index named name, or nil.
func (c *Collection) Index(name string) *Index {
	for _, ix := range c.indexes {
		if ix.Name == name {
			return ix
		}
	}
	return nil
}

// IDKey appends the table key of doc's _id to dst.
func IDKey(dst []byte, doc bson.Raw) ([]byte, bsoncore.Value, bool) {
	v, err := bsoncore.Document(doc).LookupErr("_id")
	if err != nil {
		return dst, bsoncore.Value{}, false
	}
	return keyenc.Append(dst, v), v, true
}

// Get returns the document stored under the table key pk. The slice is
// valid until the session's next operation on this collection.
func (c *Collection) Get(s *Session, pk []byte) ([]byte, error) {
	cur, err := s.ws.Cursor(c.URI(), true)
	if err != nil {
		return nil, err
	}
	return cur.Search(pk)
}

// Insert writes doc (which has an _id) and its index entries. It runs in
// the session's transaction; a duplicate _id or unique key is a
// *DuplicateKeyError.
func (c *Collection) Insert(s *Session, doc bson.Raw) error {
	if err := checkSize(doc); err != nil {
		return err
	}
	pk, id, ok := IDKey(s.kbuf[:0], doc)
	if !ok {
		return mongoerr.New(mongoerr.CodeInternalError, "document to insert has no _id")
	}
	s.kbuf = pk
	cur, err := s.ws.Cursor(c.URI(), false)
	if err != nil {
		return err
	}
	if err := cur.Insert(pk, doc); err != nil {
		if wt.IsDuplicateKey(err) {
			return duplicateID(c, id)
		}
		return err
	}
	for _, ix := range c.indexes {
		if err := ix.insertEntries(s, c, doc, pk); err != nil {
			return err
		}
	}
	s.addDelta(c, 1, int64(len(doc)))
	return nil
}

// Replace swaps the document under pk from old to new (same _id), updating
// only the index entries whose keys changed.
func (c *Collection) Replace(s *Session, pk []byte, old, new bson.Raw) error {
	if err := checkSize(new); err != nil {
		return err
	}
	pk = append([]byte(nil), pk...)
	cur, err := s.ws.Cursor(c.URI(), true)
	if err != nil {
		return err
	}
	if err := cur.Update(pk, new); err != nil {
		return err
	}
	for _, ix := range c.indexes {
		if err := ix.updateEntries(s, c, old, new, pk); err != nil {
			return err
		}
	}
	s.addDelta(c, 0, int64(len(new))-int64(len(old)))
	return nil
}

// Delete removes the document under pk (whose content is old) and its index
// entries.
func (c *Collection) Delete(s *Session, pk []byte, old bson.Raw) error {
	pk = append([]byte(nil), pk...)
	old = append(bson.Raw(nil), old...)
	cur, err := s.ws.Cursor(c.URI(), true)
	if err != nil {
		return err
	}
	if err := cur.Remove(pk); err != nil {
		return err
	}
	for _, ix := range c.indexes {
		if err := ix.removeEntries(s, old, pk); err != nil {
			return err
		}
	}
	s.addDelta(c, -1, -int64(len(old)))
	return nil
}

// checkSize is the last guard against storing a document no client could
// read back: the command layer refuses those first, with the code of
// each write path.
func checkSize(doc bson.Raw) error {
	if len(doc) > mongoerr.MaxBSONObjectSize {
		return mongoerr.New(mongoerr.CodeBSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and %d(16MB)", len(doc), len(doc), mongoerr.MaxBSONObjectSize)
	}
	return nil
}

func (c *Collection) recount(ws *wt.Session) error {
	cur, err := ws.OpenCursor(c.URI(), "")
	if err != nil {
		return err
	}
	defer cur.Close()
	var n, size int64
	for cur.Next() == nil {
		_, v, err := cur.KeyValue()
		if err != nil {
			return err
		}
		n++
		size += int64(len(v))
	}
	c.numRecords.Store(n)
	c.dataSize.Store(size)
	return nil
}

// TableStats returns the WiredTiger statistics of the collection's table.
func (c *Collection) TableStats(s *Session) ([]wt.Stat, error) {
	return s.ws.Stats("statistics:" + c.URI())
}
