package storage

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

// ParseIndexSpec checks a createIndexes spec and returns the index it
// describes (not yet created).
func ParseIndexSpec(spec bson.Raw) (*Index, error) { return parseIndexSpec(spec) }

// MaxIndexes is how many indexes, _id included, a collection may have.
const MaxIndexes = 64

// CreateIndex builds ix on c from the existing documents and records it in
// the catalog. An index with the same name and key is a no-op (false).
func (e *Engine) CreateIndex(c *Collection, ix *Index) (bool, error) {
	n, err := e.CreateIndexes(c, []*Index{ix})
	return n == 1, err
}

// CreateIndexes builds the indexes of ixs that c does not have yet and
// records them in the catalog in one transaction: after a crash either all
// of them exist or none (their tables are then orphans, dropped at the
// next start). Indexes that exist with the same name and key are skipped;
// it returns how many were created.
func (e *Engine) CreateIndexes(c *Collection, ixs []*Index) (int, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	var fresh []*Index
	for _, ix := range ixs {
		skip, err := checkNewIndex(append(c.indexes[:len(c.indexes):len(c.indexes)], fresh...), ix)
		if err != nil {
			return 0, err
		}
		if !skip {
			fresh = append(fresh, ix)
		}
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	if over := len(c.indexes) + 1 + len(fresh) - MaxIndexes; over > 0 {
		ix := fresh[len(fresh)-over]
		return 0, mongoerr.New(mongoerr.CodeCannotCreateIndex, "add index fails, too many indexes for %s key:%s", c.NS(), ShellString(ix.KeyPattern()))
	}
	built := 0
	undo := func() {
		for _, ix := range fresh[:built] {
			e.dropTable(ix.URI())
		}
	}
	for _, ix := range fresh {
		ix.Ident = e.newIdent("index")
		if err := e.meta.Create(ix.URI(), rawFormat+e.cfg.IndexConfig); err != nil {
			undo()
			return 0, err
		}
		built++
		if err := e.buildIndex(c, ix); err != nil {
			undo()
			return 0, err
		}
	}
	old := c.indexes
	c.indexes = append(c.indexes[:len(old):len(old)], fresh...)
	if err := e.saveCatalog(c); err != nil {
		c.indexes = old
		undo()
		return 0, err
	}
	return len(fresh), nil
}

// checkNewIndex compares ix with the indexes have: skip when the same
// index exists, an error when it conflicts with one.
func checkNewIndex(have []*Index, ix *Index) (skip bool, err error) {
	if ix.Name == "_id_" {
		return true, nil
	}
	for _, old := range have {
		if old.Name == ix.Name {
			if string(old.KeyPattern()) == string(ix.KeyPattern()) && old.Unique == ix.Unique {
				return true, nil
			}
			return false, mongoerr.New(mongoerr.CodeIndexKeySpecsConflict, "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s", ShellString(ix.Spec), ShellString(old.Spec))
		}
		if string(old.KeyPattern()) == string(ix.KeyPattern()) {
			return false, mongoerr.New(mongoerr.CodeIndexOptionsConflict, "Index with name: %s already exists with a different name", old.Name)
		}
	}
	return false, nil
}

// buildIndex fills ix from c's documents in batches of transactions.
func (e *Engine) buildIndex(c *Collection, ix *Index) error {
	ws, err := e.conn.OpenSession("")
	if err != nil {
		return err
	}
	defer ws.Close()
	s := &Session{e: e, ws: ws}
	scan, err := ws.OpenCursor(c.URI(), "")
	if err != nil {
		return err
	}
	defer scan.Close()
	n := 0
	if err := ws.Begin(); err != nil {
		return err
	}
	for scan.Next() == nil {
		pk, doc, err := scan.KeyValue()
		if err != nil {
			ws.Rollback()
			return err
		}
		if err := ix.insertEntries(s, c, doc, pk); err != nil {
			ws.Rollback()
			return err
		}
		if n++; n%1000 == 0 {
			if err := ws.Commit(false); err != nil {
				return err
			}
			if err := ws.Begin(); err != nil {
				return err
			}
		}
	}
	return ws.Commit(false)
}

// ErrIndexNotFound is returned by DropIndex for an unknown name.
var ErrIndexNotFound = errors.New("index not found")

// DropIndex drops the secondary index name of c.
func (e *Engine) DropIndex(c *Collection, name string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	for i, ix := range c.indexes {
		if ix.Name != name {
			continue
		}
		c.indexes = append(c.indexes[:i:i], c.indexes[i+1:]...)
		if err := e.saveCatalog(c); err != nil {
			return err
		}
		return e.dropTable(ix.URI())
	}
	return ErrIndexNotFound
}

// SetExpireAfterSeconds changes a TTL index's expiry (collMod).
func (e *Engine) SetExpireAfterSeconds(c *Collection, name string, secs int64) (old int64, err error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	ix := c.Index(name)
	if ix == nil {
		return 0, ErrIndexNotFound
	}
	if ix.ExpireAfterSeconds != nil {
		old = *ix.ExpireAfterSeconds
	}
	ix.ExpireAfterSeconds = &secs
	ix.Spec = setField(ix.Spec, "expireAfterSeconds", secs)
	return old, e.saveCatalog(c)
}

func setField(spec bson.Raw, key string, v int64) bson.Raw {
	var d bson.D
	bson.Unmarshal(spec, &d)
	found := false
	for i := range d {
		if d[i].Key == key {
			d[i].Value = v
			found = true
		}
	}
	if !found {
		d = append(d, bson.E{Key: key, Value: v})
	}
	out, _ := bson.Marshal(d)
	return out
}

// Checkpoint saves sizes and writes a WiredTiger checkpoint.
func (e *Engine) Checkpoint(ws *wt.Session) error {
	if err := e.SaveSizes(); err != nil {
		return err
	}
	return ws.Checkpoint("")
}
