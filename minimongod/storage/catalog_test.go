package storage

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

func collNames(cs []*Collection) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.NS())
	}
	return out
}

type ixSummary struct {
	Name, Key string
	Unique    bool
	TTL       string
	Multikey  bool
}

func summarize(c *Collection) []ixSummary {
	var out []ixSummary
	for _, ix := range c.Indexes() {
		ttl := "-"
		if ix.ExpireAfterSeconds != nil {
			ttl = fmt.Sprint(*ix.ExpireAfterSeconds)
		}
		out = append(out, ixSummary{ix.Name, ix.KeyPattern().String(), ix.Unique, ttl, ix.Multikey()})
	}
	return out
}

func TestCatalogSurvivesReopen(t *testing.T) {
	env := newEnv(t)
	e := env.e
	opts := marshal(t, bson.D{{Key: "validationLevel", Value: "off"}})
	a, err := e.CreateCollection("db1", "a", opts)
	if err != nil {
		t.Fatal(err)
	}
	b := mustColl(t, e, "db1", "b")
	c2 := mustColl(t, e, "db2", "c")
	if _, err := e.CreateCollection("db1", "a", nil); err != ErrExists {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if got, err := e.EnsureCollection("db1", "a"); err != nil || got != a {
		t.Fatalf("EnsureCollection existing: %v %v", got, err)
	}
	mustIndex(t, e, a, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	mustIndex(t, e, a, ixSpec("t_1", k1("t"), bson.E{Key: "expireAfterSeconds", Value: int32(3600)}))
	mustIndex(t, e, a, ixSpec("tags_1_n_-1", bson.D{{Key: "tags", Value: 1}, {Key: "n", Value: -1}}))
	s := env.session()
	var adocs, bdocs []bson.Raw
	for i := 0; i < 50; i++ {
		adocs = append(adocs, marshal(t, bson.D{{Key: "_id", Value: i}, {Key: "u", Value: i}, {Key: "t", Value: bson.DateTime(int64(i))}, {Key: "tags", Value: bson.A{"x", i % 3}}, {Key: "n", Value: i}}))
	}
	for i := 0; i < 7; i++ {
		bdocs = append(bdocs, marshal(t, bson.D{{Key: "_id", Value: fmt.Sprint("b", i)}}))
	}
	insertAll(t, s, a, adocs)
	insertAll(t, s, b, bdocs)
	// Implicit creation, as on a first insert.
	d, err := e.EnsureCollection("db3", "d")
	if err != nil {
		t.Fatal(err)
	}
	insertAll(t, s, d, []bson.Raw{marshal(t, bson.D{{Key: "_id", Value: 1}})})
	_ = c2

	wantNS := []string{"db1.a", "db1.b", "db2.c", "db3.d"}
	wantIx := summarize(a)
	wantCounts := map[string][2]int64{}
	idents := map[string]bool{}
	for _, c := range e.Collections("") {
		wantCounts[c.NS()] = [2]int64{c.Count(), c.DataSize()}
		idents[c.Ident] = true
		for _, ix := range c.Indexes() {
			idents[ix.Ident] = true
		}
	}
	if wantCounts["db1.a"] != [2]int64{50, sumLen(adocs)} {
		t.Fatalf("db1.a counts %v before reopen", wantCounts["db1.a"])
	}

	for _, recount := range []bool{false, true} {
		t.Run(fmt.Sprintf("recount=%v", recount), func(t *testing.T) {
			e := env.reopen(recount)
			if got := collNames(e.Collections("")); !slices.Equal(got, wantNS) {
				t.Fatalf("collections %v, want %v", got, wantNS)
			}
			if got := collNames(e.Collections("db1")); !slices.Equal(got, wantNS[:2]) {
				t.Fatalf("db1 collections %v", got)
			}
			if got := e.Databases(); !slices.Equal(got, []string{"db1", "db2", "db3"}) {
				t.Fatalf("databases %v", got)
			}
			a := e.Collection("db1", "a")
			if string(a.Options) != string(opts) {
				t.Errorf("options %s, want %s", a.Options, opts)
			}
			if e.Collection("db2", "c").Options != nil {
				t.Errorf("db2.c options %s, want none", e.Collection("db2", "c").Options)
			}
			want := slices.Clone(wantIx)
			if recount {
				// After a recount the multikey flags are not trusted.
				for i := range want {
					want[i].Multikey = true
				}
			}
			if got := summarize(a); !slices.Equal(got, want) {
				t.Errorf("indexes\n got %+v\nwant %+v", got, want)
			}
			for _, c := range e.Collections("") {
				if got := [2]int64{c.Count(), c.DataSize()}; got != wantCounts[c.NS()] {
					t.Errorf("%s: counts %v, want %v", c.NS(), got, wantCounts[c.NS()])
				}
			}
			s := env.session()
			for _, ix := range a.Indexes() {
				checkEntries(t, s, ix, adocs)
			}
			// The unique index is still enforced, and new tables get
			// new idents.
			s.Lock()
			s.Begin()
			err := a.Insert(s, marshal(t, bson.D{{Key: "_id", Value: 1000}, {Key: "u", Value: 7}}))
			s.Rollback()
			s.Unlock()
			asDup(t, err)
			n, err := e.EnsureCollection("db9", fmt.Sprint("new", recount))
			if err != nil {
				t.Fatal(err)
			}
			nix := mustIndex(t, e, n, ixSpec("x_1", k1("x")))
			for _, id := range []string{n.Ident, nix.Ident} {
				if idents[id] {
					t.Fatalf("ident %s reused", id)
				}
			}
			if _, err := e.DropCollection(n.DB, n.Name); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func sumLen(docs []bson.Raw) int64 {
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return n
}

// TestRecountAfterUncleanShutdown: sizes are saved at checkpoints; after a
// crash (no Engine.Close) they are stale unless Open recounts.
func TestRecountAfterUncleanShutdown(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	mustIndex(t, env.e, c, ixSpec("a_1", k1("a")))
	s := env.session()
	var docs []bson.Raw
	for i := 0; i < 20; i++ {
		docs = append(docs, marshal(t, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}}))
	}
	insertAll(t, s, c, docs[:10])
	if err := env.e.Checkpoint(s.WT()); err != nil {
		t.Fatal(err)
	}
	insertAll(t, s, c, docs[10:])
	// Crash: the connection goes away without Engine.Close. Committed
	// writes are in the journal.
	if err := env.conn.Close(""); err != nil {
		t.Fatal(err)
	}
	env.e, env.conn, env.open = nil, nil, nil

	env.start(false)
	c = env.e.Collection("db", "c")
	if c.Count() != 10 || c.DataSize() != sumLen(docs[:10]) {
		t.Fatalf("without recount: %d/%d, want the checkpoint's 10/%d", c.Count(), c.DataSize(), sumLen(docs[:10]))
	}
	if c.Index("a_1").Multikey() {
		t.Fatal("multikey set without recount")
	}
	env.shutdown()

	env.start(true)
	c = env.e.Collection("db", "c")
	if c.Count() != 20 || c.DataSize() != sumLen(docs) {
		t.Fatalf("with recount: %d/%d, want 20/%d", c.Count(), c.DataSize(), sumLen(docs))
	}
	if !c.Index("a_1").Multikey() {
		t.Fatal("recount must treat the multikey flag as unknown (true)")
	}
	checkEntries(t, env.session(), c.Index("a_1"), docs)

	// A collection without a size record is counted even without recount.
	ident := c.Ident
	env.e.Close()
	ws, err := env.conn.OpenSession("")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ws.Cursor(sizeStoreURI, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.Remove([]byte(ident)); err != nil {
		t.Fatal(err)
	}
	ws.Close()
	env.conn.Close("")
	env.e, env.conn, env.open = nil, nil, nil
	env.start(false)
	if c := env.e.Collection("db", "c"); c.Count() != 20 || c.DataSize() != sumLen(docs) {
		t.Fatalf("missing size record: %d/%d, want 20/%d", c.Count(), c.DataSize(), sumLen(docs))
	}
}

// sizeRecordExists reports whether the size store holds ident.
func sizeRecordExists(t *testing.T, s *Session, ident string) bool {
	t.Helper()
	cur, err := s.WT().OpenCursor(sizeStoreURI, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	_, err = cur.Search([]byte(ident))
	if err != nil && err != wt.ErrNotFound {
		t.Fatal(err)
	}
	return err == nil
}

func TestDropCollectionAndIndex(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	keep := mustColl(t, e, "db", "keep")
	ia := mustIndex(t, e, c, ixSpec("a_1", k1("a")))
	ib := mustIndex(t, e, c, ixSpec("b_1", k1("b"), bson.E{Key: "unique", Value: true}))
	s := env.session()
	var docs []bson.Raw
	for i := 0; i < 10; i++ {
		docs = append(docs, marshal(t, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 2}, {Key: "b", Value: i}}))
	}
	insertAll(t, s, c, docs)
	insertAll(t, s, keep, docs)
	if err := e.SaveSizes(); err != nil {
		t.Fatal(err)
	}

	// DropIndex.
	if err := e.DropIndex(c, "nope"); err != ErrIndexNotFound {
		t.Fatalf("drop unknown index: %v", err)
	}
	if err := e.DropIndex(c, "a_1"); err != nil {
		t.Fatal(err)
	}
	if c.Index("a_1") != nil || len(c.Indexes()) != 1 {
		t.Fatalf("indexes after drop: %+v", summarize(c))
	}
	if tableExists(t, s, ia.URI()) {
		t.Fatal("dropped index table still exists")
	}
	if err := e.DropIndex(c, "a_1"); err != ErrIndexNotFound {
		t.Fatalf("second drop: %v", err)
	}
	// Writes keep the remaining index exact.
	d := marshal(t, bson.D{{Key: "_id", Value: 10}, {Key: "a", Value: 1}, {Key: "b", Value: 10}})
	insertAll(t, s, c, []bson.Raw{d})
	docs = append(docs, d)
	checkEntries(t, s, ib, docs)

	e = env.reopen(false)
	s = env.session()
	c = e.Collection("db", "c")
	if got := summarize(c); len(got) != 1 || got[0].Name != "b_1" {
		t.Fatalf("indexes after reopen: %+v", got)
	}

	// DropCollection.
	cIdent, bURI := c.Ident, c.Index("b_1").URI()
	if !sizeRecordExists(t, s, cIdent) {
		t.Fatal("no size record before drop")
	}
	ok, err := e.DropCollection("db", "c")
	if err != nil || !ok {
		t.Fatalf("drop: %v %v", ok, err)
	}
	if e.Collection("db", "c") != nil {
		t.Fatal("collection still listed")
	}
	for _, uri := range []string{"table:" + cIdent, bURI} {
		if tableExists(t, s, uri) {
			t.Fatalf("%s still exists", uri)
		}
	}
	if sizeRecordExists(t, s, cIdent) {
		t.Fatal("size record left behind")
	}
	if ok, err := e.DropCollection("db", "c"); ok || err != nil {
		t.Fatalf("second drop: %v %v", ok, err)
	}

	e = env.reopen(false)
	s = env.session()
	if e.Collection("db", "c") != nil {
		t.Fatal("dropped collection back after reopen")
	}
	if got := collNames(e.Collections("")); !slices.Equal(got, []string{"db.keep"}) {
		t.Fatalf("collections after reopen: %v", got)
	}
	keep = e.Collection("db", "keep")
	if keep.Count() != 10 {
		t.Fatalf("db.keep count %d", keep.Count())
	}
	// The name can be reused; the new collection starts empty.
	c, err = e.EnsureCollection("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	s.Lock()
	n := len(drain(t, s, NewScan(c, nil, nil, false)))
	s.Unlock()
	if n != 0 || c.Count() != 0 || c.Ident == cIdent {
		t.Fatalf("recreated collection: %d docs, count %d, ident %s (old %s)", n, c.Count(), c.Ident, cIdent)
	}

	// DropDatabase.
	mustColl(t, e, "other", "x")
	if err := e.DropDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if got := e.Databases(); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("databases after dropDatabase: %v", got)
	}
	if tableExists(t, s, keep.URI()) {
		t.Fatal("db.keep table survives dropDatabase")
	}
	e = env.reopen(false)
	if got := e.Databases(); !slices.Equal(got, []string{"other"}) {
		t.Fatalf("databases after reopen: %v", got)
	}
}

// TestDropWithCachedCursors: other sessions' cached cursors on the dropped
// tables do not block the drop (the engine closes them everywhere), and
// those sessions keep working.
func TestDropWithCachedCursors(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	mustIndex(t, e, c, ixSpec("a_1", k1("a")))
	mustIndex(t, e, c, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	s1, s2 := env.session(), env.session()
	d := marshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "u", Value: 1}})
	// s2 caches cursors on the table (both overwrite modes) and indexes.
	insertAll(t, s2, c, []bson.Raw{d})
	s2.Lock()
	if _, err := c.Get(s2, pkOf(t, d)); err != nil {
		t.Fatal(err)
	}
	sc := NewScan(c, c.Index("a_1"), nil, false)
	if _, _, err := sc.Next(s2); err != nil {
		t.Fatal(err)
	}
	sc.Detach()
	s2.Unlock()
	s1.Lock()
	if _, err := c.Get(s1, pkOf(t, d)); err != nil {
		t.Fatal(err)
	}
	s1.Unlock()

	start := time.Now()
	if err := e.DropIndex(c, "u_1"); err != nil {
		t.Fatalf("drop index with cached cursors elsewhere: %v", err)
	}
	if ok, err := e.DropCollection("db", "c"); err != nil || !ok {
		t.Fatalf("drop collection with cached cursors elsewhere: %v %v", ok, err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("drops took %v: they waited for busy tables", el)
	}
	for _, uri := range []string{c.URI(), c.Indexes()[0].URI()} {
		if tableExists(t, s1, uri) {
			t.Fatalf("%s survives the drop", uri)
		}
	}
	// The detached scan fails cleanly on the dropped table.
	s2.Lock()
	if _, _, err := sc.Next(s2); err == nil {
		t.Error("scan over a dropped collection returned a document")
	}
	s2.Unlock()
	// Both sessions go on with a new collection of the same name.
	c2, err := e.EnsureCollection("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	mustIndex(t, e, c2, ixSpec("a_1", k1("a")))
	insertAll(t, s2, c2, []bson.Raw{d})
	s1.Lock()
	got, err := c2.Get(s1, pkOf(t, d))
	s1.Unlock()
	if err != nil || string(got) != string(d) {
		t.Fatalf("Get in the new collection: %v", err)
	}
	checkEntries(t, s1, c2.Index("a_1"), []bson.Raw{d})
	if c2.Count() != 1 {
		t.Fatalf("new collection count %d", c2.Count())
	}
}

func TestCreateIndexOnExistingData(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	s := env.session()
	var docs []bson.Raw
	// More than one build batch (1000 documents); u is unique except for
	// a duplicate pair far into the table.
	for i := 0; i < 2500; i++ {
		u := i
		if i == 2400 {
			u = 1500
		}
		var a any = i % 7
		if i%100 == 0 {
			a = bson.A{i % 7, "s", i % 7}
		}
		docs = append(docs, marshal(t, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: a}, {Key: "u", Value: u}}))
	}
	insertAll(t, s, c, docs)

	ix := mustIndex(t, e, c, ixSpec("a_1", k1("a")))
	checkEntries(t, s, ix, docs)
	if !ix.Multikey() {
		t.Error("index built over arrays is not multikey")
	}

	bad, err := ParseIndexSpec(marshal(t, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true})))
	if err != nil {
		t.Fatal(err)
	}
	created, err := e.CreateIndex(c, bad)
	dup := asDup(t, err)
	if created {
		t.Error("CreateIndex reported success")
	}
	if want := "E11000 duplicate key error collection: db.c index: u_1 dup key: { u: 1500 }"; dup.Err.Msg != want {
		t.Errorf("message %q, want %q", dup.Err.Msg, want)
	}
	if c.Index("u_1") != nil || len(c.Indexes()) != 1 {
		t.Fatalf("failed index is listed: %+v", summarize(c))
	}
	if bad.Ident == "" || tableExists(t, s, bad.URI()) {
		t.Fatalf("failed index left its table %q", bad.URI())
	}
	// Without the duplicate the same unique index builds.
	last := docs[2400]
	fixed := marshal(t, bson.D{{Key: "_id", Value: 2400}, {Key: "a", Value: 2400 % 7}, {Key: "u", Value: 2400}})
	inTxn(t, s, func() error { return c.Replace(s, pkOf(t, last), last, fixed) })
	docs[2400] = fixed
	e = env.reopen(false)
	s = env.session()
	c = e.Collection("db", "c")
	if got := summarize(c); len(got) != 1 || got[0].Name != "a_1" {
		t.Fatalf("indexes after reopen: %+v", got)
	}
	u := mustIndex(t, e, c, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	checkEntries(t, s, u, docs)
	checkEntries(t, s, c.Index("a_1"), docs)
}

func TestCreateIndexConflicts(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	mustIndex(t, e, c, ixSpec("a_1", k1("a")))
	mustIndex(t, e, c, ixSpec("byB", bson.D{{Key: "b", Value: -1}}, bson.E{Key: "unique", Value: true}))
	tests := []struct {
		name    string
		spec    bson.D
		created bool
		code    int32
	}{
		{"same-name-same-key", ixSpec("a_1", k1("a")), false, 0},
		{"same-name-same-key-same-unique", ixSpec("byB", bson.D{{Key: "b", Value: -1}}, bson.E{Key: "unique", Value: true}), false, 0},
		{"id-index", ixSpec("_id_", k1("_id")), false, 0},
		{"same-name-other-key", ixSpec("a_1", k1("z")), false, mongoerr.CodeIndexKeySpecsConflict},
		{"same-name-other-direction", ixSpec("byB", bson.D{{Key: "b", Value: 1}}, bson.E{Key: "unique", Value: true}), false, mongoerr.CodeIndexKeySpecsConflict},
		{"same-name-other-unique", ixSpec("a_1", k1("a"), bson.E{Key: "unique", Value: true}), false, mongoerr.CodeIndexKeySpecsConflict},
		{"same-key-other-name", ixSpec("a_asc", k1("a")), false, mongoerr.CodeIndexOptionsConflict},
		{"same-key-other-name-2", ixSpec("b_-1", bson.D{{Key: "b", Value: -1}}), false, mongoerr.CodeIndexOptionsConflict},
		{"new", ixSpec("a_1_b_1", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}), true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := summarize(c)
			ix, err := ParseIndexSpec(marshal(t, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			created, err := e.CreateIndex(c, ix)
			if created != tc.created || errCode(err) != tc.code || (tc.code == 0) != (err == nil) {
				t.Fatalf("CreateIndex = %v, %v; want %v, code %d", created, err, tc.created, tc.code)
			}
			if !tc.created && !slices.Equal(summarize(c), before) {
				t.Fatalf("indexes changed: %+v", summarize(c))
			}
		})
	}
	var me *mongoerr.Error
	ix, _ := ParseIndexSpec(marshal(t, ixSpec("a_asc", k1("a"))))
	_, err := e.CreateIndex(c, ix)
	if !errors.As(err, &me) || me.Msg != "Index with name: a_1 already exists with a different name" {
		t.Errorf("code 85 message: %v", err)
	}
}

func TestSetExpireAfterSeconds(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	mustIndex(t, e, c, ixSpec("t_1", k1("t"), bson.E{Key: "expireAfterSeconds", Value: int32(60)}))
	mustIndex(t, e, c, ixSpec("plain", k1("p")))
	if _, err := e.SetExpireAfterSeconds(c, "nope", 1); err != ErrIndexNotFound {
		t.Fatalf("unknown index: %v", err)
	}
	old, err := e.SetExpireAfterSeconds(c, "t_1", 120)
	if err != nil || old != 60 {
		t.Fatalf("SetExpireAfterSeconds = %d, %v; want 60", old, err)
	}
	if old, err := e.SetExpireAfterSeconds(c, "plain", 5); err != nil || old != 0 {
		t.Fatalf("on a non-TTL index: %d, %v", old, err)
	}
	e = env.reopen(false)
	c = e.Collection("db", "c")
	for name, want := range map[string]int64{"t_1": 120, "plain": 5} {
		ix := c.Index(name)
		if ix.ExpireAfterSeconds == nil || *ix.ExpireAfterSeconds != want {
			t.Errorf("%s: expireAfterSeconds %v after reopen, want %d", name, ix.ExpireAfterSeconds, want)
		}
		if v, err := ix.Spec.LookupErr("expireAfterSeconds"); err != nil || v.Int64() != want {
			t.Errorf("%s: spec %s", name, ix.Spec)
		}
		if ix.Spec.Lookup("name").StringValue() != name || ix.KeyPattern() == nil {
			t.Errorf("%s: spec lost fields: %s", name, ix.Spec)
		}
	}
	// The updated spec still matches its own createIndexes (no-op).
	ix, _ := ParseIndexSpec(marshal(t, ixSpec("t_1", k1("t"))))
	if created, err := e.CreateIndex(c, ix); created || err != nil {
		t.Fatalf("re-create t_1: %v %v", created, err)
	}
}

// TestConcurrentSessions: sessions on several goroutines write one
// collection while catalog changes run on another (go test -race).
func TestConcurrentSessions(t *testing.T) {
	env := newEnv(t)
	e := env.e
	c := mustColl(t, e, "db", "c")
	ix := mustIndex(t, e, c, ixSpec("a_1", k1("a")))
	other := mustColl(t, e, "db", "other")
	const workers, perWorker = 4, 150
	sessions := make([]*Session, workers)
	for i := range sessions {
		sessions[i] = env.session()
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	var mu sync.Mutex
	var all []bson.Raw
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := sessions[w]
			for i := 0; i < perWorker; i += 10 {
				var batch []bson.Raw
				s.Lock()
				s.Begin()
				for j := i; j < i+10; j++ {
					d, _ := bson.Marshal(bson.D{{Key: "_id", Value: w*1000 + j}, {Key: "a", Value: j % 5}})
					if err := c.Insert(s, d); err != nil {
						s.Rollback()
						s.Unlock()
						errs <- err
						return
					}
					batch = append(batch, d)
				}
				err := s.Commit(false)
				s.Unlock()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				all = append(all, batch...)
				mu.Unlock()
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			name := fmt.Sprint("x", i)
			spec, err := bson.Marshal(ixSpec(name, k1("x")))
			var ox *Index
			if err == nil {
				ox, err = ParseIndexSpec(spec)
			}
			if err == nil {
				_, err = e.CreateIndex(other, ox)
			}
			if err == nil {
				err = e.DropIndex(other, name)
			}
			if err == nil {
				err = e.SaveSizes()
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.Count() != workers*perWorker || c.DataSize() != sumLen(all) {
		t.Fatalf("counts %d/%d, want %d/%d", c.Count(), c.DataSize(), workers*perWorker, sumLen(all))
	}
	checkEntries(t, sessions[0], ix, all)
}
