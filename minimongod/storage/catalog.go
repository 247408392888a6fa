package storage

import (
	"fmt"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wt"
)

// catalogEntry is a collection's record in the catalog table.
type catalogEntry struct {
	NS      string       `bson:"ns"`
	Ident   string       `bson:"ident"`
	Options bson.Raw     `bson:"options,omitempty"`
	Indexes []indexEntry `bson:"indexes"`
}

type indexEntry struct {
	Ident string   `bson:"ident"`
	Spec  bson.Raw `bson:"spec"`
	// Multikey is false only when the index is known to hold no arrays.
	Multikey bool `bson:"multikey"`
}

// saveCatalog writes c's catalog entry in one durable transaction.
func (e *Engine) saveCatalog(c *Collection) error {
	return e.catalogTxn(func(cat, _ *wt.Cursor) error { return putCatalog(cat, c) })
}

// putCatalog writes c's catalog entry through cat.
func putCatalog(cat *wt.Cursor, c *Collection) error {
	ent := catalogEntry{NS: c.NS(), Ident: c.Ident, Options: c.Options}
	for _, ix := range c.indexes {
		ent.Indexes = append(ent.Indexes, indexEntry{Ident: ix.Ident, Spec: ix.Spec, Multikey: ix.Multikey()})
	}
	doc, err := bson.Marshal(ent)
	if err != nil {
		return fmt.Errorf("encode catalog entry: %w", err)
	}
	if err := cat.Insert([]byte(c.NS()), doc); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	return nil
}

// removeCatalog removes the catalog entries and size records of colls
// through cat and sizes.
func removeCatalog(cat, sizes *wt.Cursor, colls ...*Collection) error {
	for _, c := range colls {
		if err := cat.Remove([]byte(c.NS())); err != nil && err != wt.ErrNotFound {
			return fmt.Errorf("write catalog: %w", err)
		}
		if err := sizes.Remove([]byte(c.Ident)); err != nil && err != wt.ErrNotFound {
			return fmt.Errorf("write size store: %w", err)
		}
	}
	return nil
}

// catalogTxn runs f over the catalog and size store in one WiredTiger
// transaction, committed with the journal synced: a catalog change is
// all there or not there after a crash. Callers hold ddl exclusively.
func (e *Engine) catalogTxn(f func(cat, sizes *wt.Cursor) error) error {
	sizeMu.Lock()
	defer sizeMu.Unlock()
	if err := e.meta.Begin(); err != nil {
		return err
	}
	cat, err := e.meta.Cursor(catalogURI, true)
	if err == nil {
		var sizes *wt.Cursor
		if sizes, err = e.meta.Cursor(sizeStoreURI, true); err == nil {
			err = f(cat, sizes)
		}
	}
	if err != nil {
		e.meta.Rollback()
		return err
	}
	return e.meta.Commit(true)
}

func (e *Engine) loadCatalog(recount bool) error {
	cur, err := e.meta.OpenCursor(catalogURI, "")
	if err != nil {
		return err
	}
	defer cur.Close()
	var maxSeq int64
	for cur.Next() == nil {
		_, v, err := cur.KeyValue()
		if err != nil {
			return err
		}
		var ent catalogEntry
		if err := bson.Unmarshal(v, &ent); err != nil {
			return fmt.Errorf("decode catalog entry: %w", err)
		}
		db, name, _ := strings.Cut(ent.NS, ".")
		c := newCollection(e, db, name, ent.Ident, cloneRaw(ent.Options))
		maxSeq = max(maxSeq, identSeq(ent.Ident))
		for _, ie := range ent.Indexes {
			ix, err := parseIndexSpec(cloneRaw(ie.Spec))
			if err != nil {
				return fmt.Errorf("index of %s: %w", ent.NS, err)
			}
			ix.Ident = ie.Ident
			// After an unclean shutdown the flag may be stale.
			ix.multikey.Store(ie.Multikey || recount)
			maxSeq = max(maxSeq, identSeq(ie.Ident))
			c.indexes = append(c.indexes, ix)
		}
		e.coll[c.NS()] = c
	}
	e.identSeq.Store(maxSeq)
	return e.loadSizes(recount)
}

func identSeq(ident string) int64 {
	var kind string
	var seq, salt int64
	if _, err := fmt.Sscanf(strings.Replace(ident, "-", " ", 2), "%s %d %d", &kind, &seq, &salt); err != nil {
		return 0
	}
	return seq
}

func cloneRaw(b bson.Raw) bson.Raw {
	if b == nil {
		return nil
	}
	return append(bson.Raw(nil), b...)
}

// sizeRecord is a collection's counts in the size store.
type sizeRecord struct {
	NumRecords int64 `bson:"numRecords"`
	DataSize   int64 `bson:"dataSize"`
}

var sizeMu sync.Mutex

// SaveSizes writes every collection's document count and data size to the
// size store (at checkpoints and shutdown, as mongod's sizeStorer).
func (e *Engine) SaveSizes() error {
	sizeMu.Lock()
	defer sizeMu.Unlock()
	s, err := e.conn.OpenSession("")
	if err != nil {
		return err
	}
	defer s.Close()
	cur, err := s.OpenCursor(sizeStoreURI, "")
	if err != nil {
		return err
	}
	for _, c := range e.Collections("") {
		doc, _ := bson.Marshal(sizeRecord{NumRecords: c.numRecords.Load(), DataSize: c.dataSize.Load()})
		if err := cur.Insert([]byte(c.Ident), doc); err != nil {
			return fmt.Errorf("write size store: %w", err)
		}
	}
	return nil
}

func (e *Engine) loadSizes(recount bool) error {
	for _, c := range e.coll {
		if recount {
			if err := c.recount(e.meta); err != nil {
				return err
			}
			continue
		}
		cur, err := e.meta.Cursor(sizeStoreURI, true)
		if err != nil {
			return err
		}
		v, err := cur.Search([]byte(c.Ident))
		if err == wt.ErrNotFound {
			if err := c.recount(e.meta); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		var r sizeRecord
		if err := bson.Unmarshal(v, &r); err != nil {
			return err
		}
		c.numRecords.Store(r.NumRecords)
		c.dataSize.Store(r.DataSize)
	}
	return nil
}
