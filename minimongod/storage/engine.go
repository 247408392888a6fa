// Package storage is minimongod's data layer over WiredTiger: the catalog of
// databases, collections and indexes, one table per collection (keyed by an
// order-preserving encoding of _id) and per index, document writes that keep
// every index in step, range scans, and collection sizes.
package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wt"
)

const (
	catalogURI   = "table:_mdb_catalog"
	sizeStoreURI = "table:sizeStorer"
	rawFormat    = "key_format=u,value_format=u,"
)

// Config is how tables are created.
type Config struct {
	// CollectionConfig and IndexConfig are the WiredTiger create strings
	// (without key and value formats) for collection and index tables.
	CollectionConfig string
	IndexConfig      string
}

// Engine is the open data layer. It is safe for concurrent use; each client
// works through its own Session.
type Engine struct {
	conn *wt.Conn
	cfg  Config

	// ddl is held shared by every operation and exclusively by catalog
	// changes, so a dropped table has no cursor open anywhere.
	ddl  sync.RWMutex
	mu   sync.Mutex // guards colls and sessions
	coll map[string]*Collection
	sess map[*Session]struct{}

	meta      *wt.Session // catalog writes, under ddl exclusive
	identSeq  atomic.Int64
	identSalt int64
}

// Open loads the catalog from conn. With recount, collection sizes are
// counted from the tables instead of read from the size store (after an
// unclean shutdown).
func Open(conn *wt.Conn, cfg Config, recount bool) (*Engine, error) {
	meta, err := conn.OpenSession("")
	if err != nil {
		return nil, err
	}
	e := &Engine{conn: conn, cfg: cfg, coll: map[string]*Collection{}, sess: map[*Session]struct{}{},
		meta: meta, identSalt: rand.Int64N(1 << 40)}
	for _, uri := range []string{catalogURI, sizeStoreURI} {
		if err := meta.Create(uri, rawFormat); err != nil {
			return nil, fmt.Errorf("create %s: %w", uri, err)
		}
	}
	if err := e.loadCatalog(recount); err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	if err := e.dropOrphans(); err != nil {
		return nil, fmt.Errorf("drop orphaned tables: %w", err)
	}
	return e, nil
}

// Conn returns the WiredTiger connection.
func (e *Engine) Conn() *wt.Conn { return e.conn }

func (e *Engine) newIdent(kind string) string {
	return fmt.Sprintf("%s-%d-%d", kind, e.identSeq.Add(1), e.identSalt)
}

// Session is one client's handle on the engine: a WiredTiger session with
// cached cursors. It must be used by one goroutine at a time.
type Session struct {
	e  *Engine
	ws *wt.Session
	// buffers reused across operations
	kbuf    []byte
	pending map[*Collection]delta
}

// NewSession opens a session; Close it when the client goes away.
func (e *Engine) NewSession() (*Session, error) {
	ws, err := e.conn.OpenSession("")
	if err != nil {
		return nil, err
	}
	s := &Session{e: e, ws: ws}
	e.mu.Lock()
	e.sess[s] = struct{}{}
	e.mu.Unlock()
	return s, nil
}

// Close closes the session.
func (s *Session) Close() error {
	s.e.ddl.RLock()
	defer s.e.ddl.RUnlock()
	s.e.mu.Lock()
	delete(s.e.sess, s)
	s.e.mu.Unlock()
	return s.ws.Close()
}

// WT returns the underlying WiredTiger session (statistics, checkpoints).
func (s *Session) WT() *wt.Session { return s.ws }

// Lock holds the engine's shared lock for one operation; Unlock releases it.
func (s *Session) Lock()   { s.e.ddl.RLock() }
func (s *Session) Unlock() { s.e.ddl.RUnlock() }

// closeCursorsEverywhere closes cached cursors on uri in every session.
// Callers hold ddl exclusively, so no session is in use.
func (e *Engine) closeCursorsEverywhere(uri string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for s := range e.sess {
		s.ws.CloseCursors(uri)
	}
	e.meta.CloseCursors(uri)
}

// dropTable drops uri.
func (e *Engine) dropTable(uri string) error {
	return e.whenIdle(uri, func() error { return e.meta.Drop(uri, "force=true") })
}

// whenIdle runs op on uri once no session has a cursor on it, retrying
// while a checkpoint holds it (EBUSY). Callers hold ddl exclusively.
func (e *Engine) whenIdle(uri string, op func() error) error {
	e.closeCursorsEverywhere(uri)
	var err error
	for i := 0; i < 200; i++ {
		if err = op(); err == nil || !wt.IsBusy(err) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// Namespaces lists the collections of db (all databases when db is ""),
// sorted by namespace.
func (e *Engine) Collections(db string) []*Collection {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Collection
	for _, c := range e.coll {
		if db == "" || c.DB == db {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NS() < out[j].NS() })
	return out
}

// Databases lists the database names that hold at least one collection.
func (e *Engine) Databases() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, c := range e.coll {
		if !seen[c.DB] {
			seen[c.DB] = true
			out = append(out, c.DB)
		}
	}
	sort.Strings(out)
	return out
}

// Collection returns db.name, or nil.
func (e *Engine) Collection(db, name string) *Collection {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.coll[db+"."+name]
}

// ErrExists is returned when creating a collection that exists.
var ErrExists = errors.New("collection already exists")

// CreateCollection creates db.name with its _id index. options is the
// create command's options document, kept in the catalog.
func (e *Engine) CreateCollection(db, name string, options bson.Raw) (*Collection, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	return e.createLocked(db, name, options)
}

// EnsureCollection returns db.name, creating it when missing (implicit
// creation on first insert, as mongod does).
func (e *Engine) EnsureCollection(db, name string) (*Collection, error) {
	if c := e.Collection(db, name); c != nil {
		return c, nil
	}
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if c := e.Collection(db, name); c != nil {
		return c, nil
	}
	return e.createLocked(db, name, nil)
}

func (e *Engine) createLocked(db, name string, options bson.Raw) (*Collection, error) {
	if e.Collection(db, name) != nil {
		return nil, ErrExists
	}
	c := newCollection(e, db, name, e.newIdent("collection"), options)
	if err := e.meta.Create(c.URI(), rawFormat+e.cfg.CollectionConfig); err != nil {
		return nil, fmt.Errorf("create collection table: %w", err)
	}
	if err := e.saveCatalog(c); err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.coll[c.NS()] = c
	e.mu.Unlock()
	return c, nil
}

// DropCollection drops db.name and its indexes; false when it did not exist.
func (e *Engine) DropCollection(db, name string) (bool, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	return e.dropLocked(db, name)
}

func (e *Engine) dropLocked(db, name string) (bool, error) {
	c := e.Collection(db, name)
	if c == nil {
		return false, nil
	}
	return true, e.dropCollections(c)
}

// DropDatabase drops every collection of db, all or none across a crash.
func (e *Engine) DropDatabase(db string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	return e.dropCollections(e.Collections(db)...)
}

// dropCollections removes colls from the catalog in one transaction and
// then drops their tables; tables a crash leaves behind are dropped at
// the next start (dropOrphans).
func (e *Engine) dropCollections(colls ...*Collection) error {
	if len(colls) == 0 {
		return nil
	}
	if err := e.catalogTxn(func(cat, sizes *wt.Cursor) error { return removeCatalog(cat, sizes, colls...) }); err != nil {
		return err
	}
	e.mu.Lock()
	for _, c := range colls {
		delete(e.coll, c.NS())
	}
	e.mu.Unlock()
	var first error
	for _, c := range colls {
		for _, ix := range c.indexes {
			if err := e.dropTable(ix.URI()); err != nil && first == nil {
				first = err
			}
		}
		if err := e.dropTable(c.URI()); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Close saves collection sizes. The caller closes the connection.
func (e *Engine) Close() error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	err := e.SaveSizes()
	for _, c := range e.Collections("") {
		if serr := e.saveCatalog(c); serr != nil && err == nil {
			err = serr
		}
	}
	e.meta.Close()
	return err
}

// RenameCollection renames c to newName in the same database, replacing
// an existing target when dropTarget: one catalog transaction, so a
// crash leaves the old name or the new one, never both or neither.
func (e *Engine) RenameCollection(c *Collection, newName string, dropTarget bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	target := e.Collection(c.DB, newName)
	if target != nil && !dropTarget {
		return ErrExists
	}
	renamed := newCollection(e, c.DB, newName, c.Ident, c.Options)
	renamed.indexes = c.indexes
	err := e.catalogTxn(func(cat, sizes *wt.Cursor) error {
		if err := cat.Remove([]byte(c.NS())); err != nil {
			return err
		}
		if target != nil {
			if err := removeCatalog(cat, sizes, target); err != nil {
				return err
			}
		}
		return putCatalog(cat, renamed)
	})
	if err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.coll, c.NS())
	c.Name = newName
	if target != nil {
		delete(e.coll, target.NS())
	}
	e.coll[c.NS()] = c
	e.mu.Unlock()
	if target == nil {
		return nil
	}
	for _, ix := range target.indexes {
		e.dropTable(ix.URI())
	}
	return e.dropTable(target.URI())
}
