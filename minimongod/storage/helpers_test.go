package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

const testWTConfig = "create,cache_size=64M,statistics=(fast),log=(enabled=true,path=journal)"

// testEnv is one WiredTiger database directory with an open connection and
// engine; reopen closes both and opens them again on the same files.
type testEnv struct {
	t    *testing.T
	dir  string
	conn *wt.Conn
	e    *Engine
	open []*Session
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "journal"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := &testEnv{t: t, dir: dir}
	env.start(false)
	t.Cleanup(env.shutdown)
	return env
}

func (env *testEnv) start(recount bool) {
	env.t.Helper()
	conn, err := wt.Open(env.dir, testWTConfig)
	if err != nil {
		env.t.Fatal(err)
	}
	e, err := Open(conn, Config{}, recount)
	if err != nil {
		conn.Close("")
		env.t.Fatalf("storage.Open: %v", err)
	}
	env.conn, env.e = conn, e
}

func (env *testEnv) shutdown() {
	if env.e == nil {
		return
	}
	for _, s := range env.open {
		s.Close()
	}
	env.open = nil
	if err := env.e.Close(); err != nil {
		env.t.Errorf("engine close: %v", err)
	}
	if err := env.conn.Close(""); err != nil {
		env.t.Errorf("conn close: %v", err)
	}
	env.e, env.conn = nil, nil
}

// reopen closes the engine and the connection cleanly and opens them again.
func (env *testEnv) reopen(recount bool) *Engine {
	env.t.Helper()
	env.shutdown()
	env.start(recount)
	return env.e
}

// session opens an engine session closed at shutdown.
func (env *testEnv) session() *Session {
	env.t.Helper()
	s, err := env.e.NewSession()
	if err != nil {
		env.t.Fatal(err)
	}
	env.open = append(env.open, s)
	return s
}

func mustColl(t *testing.T, e *Engine, db, name string) *Collection {
	t.Helper()
	c, err := e.CreateCollection(db, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustIndex creates an index from a spec document.
func mustIndex(t *testing.T, e *Engine, c *Collection, spec bson.D) *Index {
	t.Helper()
	ix, err := ParseIndexSpec(marshal(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	created, err := e.CreateIndex(c, ix)
	if err != nil {
		t.Fatalf("create index %s: %v", ix.Name, err)
	}
	if !created {
		t.Fatalf("create index %s: reported as existing", ix.Name)
	}
	return c.Index(ix.Name)
}

func marshal(t testing.TB, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inTxn runs fn in a transaction and commits it, failing the test on error.
func inTxn(t *testing.T, s *Session, fn func() error) {
	t.Helper()
	s.Lock()
	defer s.Unlock()
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := fn(); err != nil {
		s.Rollback()
		t.Fatal(err)
	}
	if err := s.Commit(false); err != nil {
		t.Fatal(err)
	}
}

func insertAll(t *testing.T, s *Session, c *Collection, docs []bson.Raw) {
	t.Helper()
	inTxn(t, s, func() error {
		for _, d := range docs {
			if err := c.Insert(s, d); err != nil {
				return err
			}
		}
		return nil
	})
}

// enc is the key encoding of a Go value (marshalled as {v: x}).
func enc(t testing.TB, x any) []byte {
	t.Helper()
	return keyenc.Append(nil, val(t, x))
}

func val(t testing.TB, x any) bsoncore.Value {
	t.Helper()
	return bsoncore.Document(marshal(t, bson.D{{Key: "v", Value: x}})).Lookup("v")
}

func pkOf(t testing.TB, doc bson.Raw) []byte {
	t.Helper()
	k, _, ok := IDKey(nil, doc)
	if !ok {
		t.Fatalf("no _id in %s", doc)
	}
	return k
}

// drain runs sc to the end in one session and returns the table keys it
// yields, checking that each document is the one stored under its key.
func drain(t *testing.T, s *Session, sc *Scan) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		pk, doc, err := sc.Next(s)
		if err == wt.ErrNotFound {
			return out
		}
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		checkDocKey(t, pk, doc)
		out = append(out, append([]byte(nil), pk...))
		if len(out) > 1e6 {
			t.Fatal("scan does not end")
		}
	}
}

func checkDocKey(t *testing.T, pk, doc []byte) {
	t.Helper()
	if got := pkOf(t, doc); !bytes.Equal(got, pk) {
		t.Fatalf("scan returned document %s under key %x", bson.Raw(doc), pk)
	}
}

// rawEntry is one raw entry of an index table.
type rawEntry struct{ key, pk string }

// indexEntries reads ix's table directly, in key order.
func indexEntries(t *testing.T, s *Session, ix *Index) []rawEntry {
	t.Helper()
	cur, err := s.WT().OpenCursor(ix.URI(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var out []rawEntry
	for cur.Next() == nil {
		k, v, err := cur.KeyValue()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rawEntry{string(k), string(v)})
	}
	return out
}

// expectedEntries computes ix's entries from docs: one per distinct value
// (tuple) per document, keyed enc(values) [+ pk unless unique].
func expectedEntries(t *testing.T, ix *Index, docs []bson.Raw) []rawEntry {
	t.Helper()
	var out []rawEntry
	for _, d := range docs {
		pk := pkOf(t, d)
		seen := map[string]bool{}
		for _, tuple := range valueTuples(ix, d) {
			var k []byte
			for _, v := range tuple {
				k = keyenc.Append(k, v)
			}
			if seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			if !ix.Unique {
				k = append(k, pk...)
			}
			out = append(out, rawEntry{string(k), string(pk)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// valueTuples is the cross product of each field's values in d, computed
// independently of Index.keys from the documents themselves.
func valueTuples(ix *Index, d bson.Raw) [][]bsoncore.Value {
	out := [][]bsoncore.Value{nil}
	for _, f := range ix.Fields {
		vals := fieldValues(bsoncore.Document(d), f.Path)
		var next [][]bsoncore.Value
		for _, p := range out {
			for _, v := range vals {
				next = append(next, append(append([]bsoncore.Value(nil), p...), v))
			}
		}
		out = next
	}
	return out
}

// fieldValues: top-level or one-level dotted paths, arrays expanded, empty
// arrays as undefined, missing as null (enough for the documents here).
func fieldValues(d bsoncore.Document, path string) []bsoncore.Value {
	if i := bytes.IndexByte([]byte(path), '.'); i >= 0 {
		head, rest := path[:i], path[i+1:]
		v, err := d.LookupErr(head)
		if err != nil {
			return []bsoncore.Value{{Type: bsoncore.TypeNull}}
		}
		switch v.Type {
		case bsoncore.TypeEmbeddedDocument:
			return fieldValues(v.Document(), rest)
		case bsoncore.TypeArray:
			elems, _ := v.Array().Values()
			var out []bsoncore.Value
			for _, el := range elems {
				if el.Type == bsoncore.TypeEmbeddedDocument {
					out = append(out, fieldValues(el.Document(), rest)...)
				}
			}
			if len(out) == 0 {
				out = []bsoncore.Value{{Type: bsoncore.TypeNull}}
			}
			return out
		}
		return []bsoncore.Value{{Type: bsoncore.TypeNull}}
	}
	v, err := d.LookupErr(path)
	if err != nil {
		return []bsoncore.Value{{Type: bsoncore.TypeNull}}
	}
	if v.Type == bsoncore.TypeArray {
		elems, _ := v.Array().Values()
		if len(elems) == 0 {
			return []bsoncore.Value{{Type: bsoncore.TypeUndefined}}
		}
		return elems
	}
	return []bsoncore.Value{v}
}

func checkEntries(t *testing.T, s *Session, ix *Index, docs []bson.Raw) {
	t.Helper()
	got := indexEntries(t, s, ix)
	want := expectedEntries(t, ix, docs)
	if len(got) != len(want) {
		t.Fatalf("index %s: %d entries, want %d\ngot  %q\nwant %q", ix.Name, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("index %s entry %d: got %q, want %q", ix.Name, i, got[i], want[i])
		}
	}
}

func errCode(err error) int32 {
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me.Code
	}
	return 0
}

// tableExists reports whether a WiredTiger table can be opened.
func tableExists(t *testing.T, s *Session, uri string) bool {
	t.Helper()
	cur, err := s.WT().OpenCursor(uri, "")
	if err != nil {
		return false
	}
	cur.Close()
	return true
}
