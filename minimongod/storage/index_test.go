package storage

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/wt"
)

func ixSpec(name string, key bson.D, opts ...bson.E) bson.D {
	return append(bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}, opts...)
}

func k1(f string) bson.D { return bson.D{{Key: f, Value: 1}} }

// TestIndexMaintenance runs a sequence of inserts, replaces and deletes and
// after every step compares each index table with entries computed from
// the documents the collection should hold.
func TestIndexMaintenance(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	a := mustIndex(t, env.e, c, ixSpec("a_1", k1("a")))
	ab := mustIndex(t, env.e, c, ixSpec("a_1_b_-1", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}))
	xy := mustIndex(t, env.e, c, ixSpec("x.y_1", k1("x.y")))
	u := mustIndex(t, env.e, c, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	s := env.session()

	state := map[int32]bson.Raw{}
	var order []int32
	current := func() []bson.Raw {
		var out []bson.Raw
		for _, id := range order {
			if d, ok := state[id]; ok {
				out = append(out, d)
			}
		}
		return out
	}
	doc := func(id int32, rest ...bson.E) bson.Raw {
		return marshal(t, append(bson.D{{Key: "_id", Value: id}}, rest...))
	}
	type step struct {
		op  string // insert, replace, delete
		doc bson.Raw
	}
	steps := []step{
		{"insert", doc(1, bson.E{Key: "a", Value: 1}, bson.E{Key: "b", Value: "x"}, bson.E{Key: "u", Value: 1})},
		{"insert", doc(2, bson.E{Key: "a", Value: 1}, bson.E{Key: "u", Value: 2})},
		{"insert", doc(3)}, // every field missing: null entries
		{"insert", doc(4, bson.E{Key: "a", Value: bson.A{3, 1, 3, 2}}, bson.E{Key: "b", Value: 7}, bson.E{Key: "u", Value: bson.A{10, 11, 10}})},
		{"insert", doc(5, bson.E{Key: "a", Value: bson.A{}}, bson.E{Key: "u", Value: "s"})},
		{"insert", doc(6, bson.E{Key: "a", Value: 2}, bson.E{Key: "b", Value: bson.A{1, 2}}, bson.E{Key: "u", Value: 6})},
		{"insert", doc(7, bson.E{Key: "x", Value: bson.A{bson.D{{Key: "y", Value: 1}}, bson.D{{Key: "y", Value: 2}}, 5, bson.D{{Key: "z", Value: 1}}}}, bson.E{Key: "u", Value: 7})},
		{"insert", doc(8, bson.E{Key: "x", Value: bson.D{{Key: "y", Value: bson.A{4, 4, 5}}}}, bson.E{Key: "u", Value: 8})},
		{"replace", doc(1, bson.E{Key: "a", Value: bson.A{1, 5}}, bson.E{Key: "b", Value: "x"}, bson.E{Key: "u", Value: 1})}, // a changes, u does not
		{"replace", doc(4, bson.E{Key: "a", Value: 9}, bson.E{Key: "b", Value: 7}, bson.E{Key: "u", Value: bson.A{11, 12}})},
		{"replace", doc(2, bson.E{Key: "a", Value: 1}, bson.E{Key: "u", Value: 2}, bson.E{Key: "extra", Value: "only the document changes"})},
		{"replace", doc(7, bson.E{Key: "u", Value: 10})}, // takes u: 10, freed by _id 4
		{"delete", doc(3)},
		{"delete", doc(6, bson.E{Key: "a", Value: 2}, bson.E{Key: "b", Value: bson.A{1, 2}}, bson.E{Key: "u", Value: 6})},
		{"insert", doc(3, bson.E{Key: "a", Value: 3})},
		{"insert", doc(6, bson.E{Key: "u", Value: 6})},
	}
	for i, st := range steps {
		id := int32(bson.Raw(st.doc).Lookup("_id").Int32())
		inTxn(t, s, func() error {
			pk := pkOf(t, st.doc)
			switch st.op {
			case "insert":
				return c.Insert(s, st.doc)
			case "replace":
				old := state[id]
				return c.Replace(s, pk, old, st.doc)
			default:
				return c.Delete(s, pk, state[id])
			}
		})
		switch st.op {
		case "insert":
			if !slices.Contains(order, id) {
				order = append(order, id)
			}
			state[id] = st.doc
		case "replace":
			state[id] = st.doc
		default:
			delete(state, id)
		}
		for _, ix := range []*Index{a, ab, xy, u} {
			t.Run(fmt.Sprintf("step%02d-%s-%d/%s", i, st.op, id, ix.Name), func(t *testing.T) {
				checkEntries(t, s, ix, current())
			})
		}
		if got, want := c.Count(), int64(len(state)); got != want {
			t.Fatalf("step %d: Count = %d, want %d", i, got, want)
		}
		var size int64
		for _, d := range state {
			size += int64(len(d))
		}
		if got := c.DataSize(); got != size {
			t.Fatalf("step %d: DataSize = %d, want %d", i, got, size)
		}
	}
	for _, ix := range []*Index{a, ab, xy, u} {
		if !ix.Multikey() {
			t.Errorf("%s: Multikey() = false after array values", ix.Name)
		}
	}
}

func TestMultikeyFlag(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	ix := mustIndex(t, env.e, c, ixSpec("a_1", k1("a")))
	s := env.session()
	insertAll(t, s, c, []bson.Raw{
		marshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}),
		marshal(t, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "x", Value: bson.A{1}}}}}),
	})
	if ix.Multikey() {
		t.Fatal("Multikey() true with no array on the path")
	}
	d := marshal(t, bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: bson.A{1, 2, 2, 1}}})
	insertAll(t, s, c, []bson.Raw{d})
	if !ix.Multikey() {
		t.Fatal("Multikey() false after an array insert")
	}
	// One entry per distinct element.
	n := 0
	for _, e := range indexEntries(t, s, ix) {
		if e.pk == string(pkOf(t, d)) {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("array [1,2,2,1] has %d entries, want 2", n)
	}
	// The flag is persisted in the catalog.
	env.reopen(false)
	if !env.e.Collection("db", "c").Index("a_1").Multikey() {
		t.Fatal("Multikey() lost on reopen")
	}
}

func TestParallelArrays(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	ix := mustIndex(t, env.e, c, ixSpec("a_1_b_1", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}))
	s := env.session()
	tests := []struct {
		name string
		doc  bson.D
		ok   bool
	}{
		{"both-scalar", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 2}}, true},
		{"a-array", bson.D{{Key: "a", Value: bson.A{1, 2}}, {Key: "b", Value: 2}}, true},
		{"b-array", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.A{1, 2}}}, true},
		{"both-arrays", bson.D{{Key: "a", Value: bson.A{1, 2}}, {Key: "b", Value: bson.A{3, 4}}}, false},
		{"both-empty-arrays", bson.D{{Key: "a", Value: bson.A{}}, {Key: "b", Value: bson.A{}}}, false},
	}
	var kept []bson.Raw
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := marshal(t, append(bson.D{{Key: "_id", Value: i}}, tc.doc...))
			s.Lock()
			defer s.Unlock()
			s.Begin()
			err := c.Insert(s, d)
			if tc.ok {
				if err != nil {
					s.Rollback()
					t.Fatal(err)
				}
				if err := s.Commit(false); err != nil {
					t.Fatal(err)
				}
				kept = append(kept, d)
				return
			}
			s.Rollback()
			if errCode(err) != mongoerr.CodeCannotIndexParallel {
				t.Fatalf("insert %s: %v, want code 171", bson.Raw(d), err)
			}
			if want := "cannot index parallel arrays [b] [a]"; err.(*mongoerr.Error).Msg != want {
				t.Errorf("message %q, want %q", err.(*mongoerr.Error).Msg, want)
			}
		})
	}
	checkEntries(t, s, ix, kept)
	if c.Count() != int64(len(kept)) {
		t.Fatalf("Count = %d, want %d", c.Count(), len(kept))
	}
}

func asDup(t *testing.T, err error) *DuplicateKeyError {
	t.Helper()
	var dup *DuplicateKeyError
	if !errors.As(err, &dup) {
		t.Fatalf("error %v (%T), want *DuplicateKeyError", err, err)
	}
	if dup.Err.Code != mongoerr.CodeDuplicateKey {
		t.Fatalf("code %d, want 11000", dup.Err.Code)
	}
	if errCode(err) != mongoerr.CodeDuplicateKey {
		t.Fatal("DuplicateKeyError does not unwrap to the E11000 mongoerr.Error")
	}
	return dup
}

func TestDuplicateKeys(t *testing.T) {
	oid := bson.ObjectID{0x65, 0x0f, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3}
	tests := []struct {
		name    string
		index   bson.D // unique index spec, nil for _id only
		first   bson.D
		second  bson.D
		ixName  string
		pattern bson.D
		value   bson.D
		msg     string
	}{
		{
			name: "id-int", first: bson.D{{Key: "_id", Value: 1}}, second: bson.D{{Key: "_id", Value: 1}, {Key: "x", Value: 2}},
			ixName: "_id_", pattern: bson.D{{Key: "_id", Value: int32(1)}}, value: bson.D{{Key: "_id", Value: int32(1)}},
			msg: "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1 }",
		},
		{
			name: "id-long-vs-int", first: bson.D{{Key: "_id", Value: int32(7)}}, second: bson.D{{Key: "_id", Value: int64(7)}},
			ixName: "_id_", pattern: bson.D{{Key: "_id", Value: int32(1)}}, value: bson.D{{Key: "_id", Value: int64(7)}},
			msg: "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 7 }",
		},
		{
			name: "id-objectid", first: bson.D{{Key: "_id", Value: oid}}, second: bson.D{{Key: "_id", Value: oid}},
			ixName: "_id_", pattern: bson.D{{Key: "_id", Value: int32(1)}}, value: bson.D{{Key: "_id", Value: oid}},
			msg: "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: ObjectId('650f1a2b3c4d5e6f708192a3') }",
		},
		{
			name: "id-doc", first: bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: "x"}}}},
			second: bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: "x"}}}},
			ixName: "_id_", pattern: bson.D{{Key: "_id", Value: int32(1)}}, value: bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}}}},
			msg: `E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: { a: 1, b: "x" } }`,
		},
		{
			name: "unique-string", index: ixSpec("email_1", k1("email"), bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: "a@x"}},
			second: bson.D{{Key: "_id", Value: 2}, {Key: "email", Value: "a@x"}},
			ixName: "email_1", pattern: bson.D{{Key: "email", Value: int32(1)}}, value: bson.D{{Key: "email", Value: "a@x"}},
			msg: `E11000 duplicate key error collection: db.c index: email_1 dup key: { email: "a@x" }`,
		},
		{
			name: "unique-missing-is-null", index: ixSpec("email_1", k1("email"), bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}},
			second: bson.D{{Key: "_id", Value: 2}, {Key: "other", Value: 1}},
			ixName: "email_1", pattern: bson.D{{Key: "email", Value: int32(1)}}, value: bson.D{{Key: "email", Value: nil}},
			msg: `E11000 duplicate key error collection: db.c index: email_1 dup key: { email: null }`,
		},
		{
			name: "unique-null-vs-missing", index: ixSpec("email_1", k1("email"), bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: nil}},
			second: bson.D{{Key: "_id", Value: 2}},
			ixName: "email_1", pattern: bson.D{{Key: "email", Value: int32(1)}}, value: bson.D{{Key: "email", Value: nil}},
			msg: `E11000 duplicate key error collection: db.c index: email_1 dup key: { email: null }`,
		},
		{
			name: "unique-compound", index: ixSpec("a_1_b_-1", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}, bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}, {Key: "b", Value: true}},
			second: bson.D{{Key: "_id", Value: 2}, {Key: "b", Value: true}, {Key: "a", Value: 1.0}},
			ixName: "a_1_b_-1", pattern: bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int32(-1)}}, value: bson.D{{Key: "a", Value: 1.0}, {Key: "b", Value: true}},
			msg: `E11000 duplicate key error collection: db.c index: a_1_b_-1 dup key: { a: 1.0, b: true }`,
		},
		{
			// The key reported is the element that collided, not the
			// array's first element.
			name: "unique-multikey", index: ixSpec("tags_1", k1("tags"), bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}, {Key: "tags", Value: "red"}},
			second: bson.D{{Key: "_id", Value: 2}, {Key: "tags", Value: bson.A{"blue", "red"}}},
			ixName: "tags_1", pattern: bson.D{{Key: "tags", Value: int32(1)}}, value: bson.D{{Key: "tags", Value: "red"}},
			msg: `E11000 duplicate key error collection: db.c index: tags_1 dup key: { tags: "red" }`,
		},
		{
			name: "unique-dotted", index: ixSpec("p.q_1", k1("p.q"), bson.E{Key: "unique", Value: true}),
			first:  bson.D{{Key: "_id", Value: 1}, {Key: "p", Value: bson.D{{Key: "q", Value: int64(9)}}}},
			second: bson.D{{Key: "_id", Value: 2}, {Key: "p", Value: bson.D{{Key: "q", Value: int64(9)}}}},
			ixName: "p.q_1", pattern: bson.D{{Key: "p.q", Value: int32(1)}}, value: bson.D{{Key: "p.q", Value: int64(9)}},
			msg: `E11000 duplicate key error collection: db.c index: p.q_1 dup key: { p.q: 9 }`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			c := mustColl(t, env.e, "db", "c")
			var ix *Index
			if tc.index != nil {
				ix = mustIndex(t, env.e, c, tc.index)
			}
			s := env.session()
			first := marshal(t, tc.first)
			insertAll(t, s, c, []bson.Raw{first})
			count, size := c.Count(), c.DataSize()

			s.Lock()
			s.Begin()
			err := c.Insert(s, marshal(t, tc.second))
			s.Rollback()
			s.Unlock()
			dup := asDup(t, err)
			if dup.Err.Msg != tc.msg {
				t.Errorf("message\n got %q\nwant %q", dup.Err.Msg, tc.msg)
			}
			if want := marshal(t, tc.pattern); string(dup.KeyPattern) != string(want) {
				t.Errorf("KeyPattern %s, want %s", dup.KeyPattern, want)
			}
			if want := marshal(t, tc.value); string(dup.KeyValue) != string(want) {
				t.Errorf("KeyValue %s, want %s", dup.KeyValue, want)
			}
			if dup.Error() != dup.Err.Error() {
				t.Errorf("Error() = %q, want the E11000 error's %q", dup.Error(), dup.Err.Error())
			}
			// Nothing of the rejected document remains.
			if c.Count() != count || c.DataSize() != size {
				t.Errorf("counts changed: %d/%d, want %d/%d", c.Count(), c.DataSize(), count, size)
			}
			s.Lock()
			got := drain(t, s, NewScan(c, nil, nil, false))
			s.Unlock()
			if len(got) != 1 {
				t.Errorf("%d documents after the failed insert, want 1", len(got))
			}
			if ix != nil {
				checkEntries(t, s, ix, []bson.Raw{first})
			}
		})
	}
}

// TestUniqueReplace: changing a document onto another's unique key fails;
// keeping its own key, or moving to a free one, works.
func TestUniqueReplace(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	ix := mustIndex(t, env.e, c, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	s := env.session()
	d1 := marshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "u", Value: 1}})
	d2 := marshal(t, bson.D{{Key: "_id", Value: 2}, {Key: "u", Value: 2}})
	insertAll(t, s, c, []bson.Raw{d1, d2})

	s.Lock()
	s.Begin()
	err := c.Replace(s, pkOf(t, d2), d2, marshal(t, bson.D{{Key: "_id", Value: 2}, {Key: "u", Value: bson.A{3, 1}}}))
	s.Rollback()
	s.Unlock()
	dup := asDup(t, err)
	if want := `E11000 duplicate key error collection: db.c index: u_1 dup key: { u: 1 }`; dup.Err.Msg != want {
		t.Errorf("message %q, want %q", dup.Err.Msg, want)
	}
	checkEntries(t, s, ix, []bson.Raw{d1, d2})

	d2b := marshal(t, bson.D{{Key: "_id", Value: 2}, {Key: "u", Value: 2}, {Key: "x", Value: 1}})
	inTxn(t, s, func() error { return c.Replace(s, pkOf(t, d2), d2, d2b) })
	d1b := marshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "u", Value: 5}})
	inTxn(t, s, func() error { return c.Replace(s, pkOf(t, d1), d1, d1b) })
	checkEntries(t, s, ix, []bson.Raw{d1b, d2b})
	// u: 1 is free again.
	d3 := marshal(t, bson.D{{Key: "_id", Value: 3}, {Key: "u", Value: 1}})
	insertAll(t, s, c, []bson.Raw{d3})
	checkEntries(t, s, ix, []bson.Raw{d1b, d2b, d3})
}

func TestInsertWithoutID(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	s := env.session()
	s.Lock()
	defer s.Unlock()
	s.Begin()
	defer s.Rollback()
	if err := c.Insert(s, marshal(t, bson.D{{Key: "a", Value: 1}})); errCode(err) != mongoerr.CodeInternalError {
		t.Fatalf("insert without _id: %v", err)
	}
	if _, err := c.Get(s, enc(t, 1)); err != wt.ErrNotFound {
		t.Fatalf("Get missing: %v", err)
	}
}
