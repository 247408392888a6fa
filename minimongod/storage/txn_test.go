package storage

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/wt"
)

func TestTransactions(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	a := mustIndex(t, env.e, c, ixSpec("a_1", k1("a")))
	u := mustIndex(t, env.e, c, ixSpec("u_1", k1("u"), bson.E{Key: "unique", Value: true}))
	s := env.session()
	doc := func(id int, a any, u any, pad string) bson.Raw {
		return marshal(t, bson.D{{Key: "_id", Value: id}, {Key: "a", Value: a}, {Key: "u", Value: u}, {Key: "pad", Value: pad}})
	}
	d1 := doc(1, bson.A{1, 2}, 1, "x")
	insertAll(t, s, c, []bson.Raw{d1})
	check := func(t *testing.T, docs ...bson.Raw) {
		t.Helper()
		var size int64
		for _, d := range docs {
			size += int64(len(d))
		}
		if c.Count() != int64(len(docs)) || c.DataSize() != size {
			t.Fatalf("Count/DataSize = %d/%d, want %d/%d", c.Count(), c.DataSize(), len(docs), size)
		}
		s.Lock()
		got := drain(t, s, NewScan(c, nil, nil, false))
		s.Unlock()
		if len(got) != len(docs) {
			t.Fatalf("%d documents in the table, want %d", len(got), len(docs))
		}
		checkEntries(t, s, a, docs)
		checkEntries(t, s, u, docs)
	}
	check(t, d1)

	t.Run("rollback", func(t *testing.T) {
		s.Lock()
		if err := s.Begin(); err != nil {
			t.Fatal(err)
		}
		if err := c.Insert(s, doc(2, 5, 2, "yy")); err != nil {
			t.Fatal(err)
		}
		if err := c.Insert(s, doc(3, bson.A{6, 7}, 3, "zzz")); err != nil {
			t.Fatal(err)
		}
		if err := c.Replace(s, pkOf(t, d1), d1, doc(1, 9, 9, "a much longer padding")); err != nil {
			t.Fatal(err)
		}
		// Deltas are pending until commit.
		if c.Count() != 1 || c.DataSize() != int64(len(d1)) {
			t.Errorf("counts moved inside the transaction: %d/%d", c.Count(), c.DataSize())
		}
		if err := s.Rollback(); err != nil {
			t.Fatal(err)
		}
		s.Unlock()
		check(t, d1)
		s.Lock()
		defer s.Unlock()
		for _, id := range []int{2, 3} {
			if _, err := c.Get(s, enc(t, id)); err != wt.ErrNotFound {
				t.Errorf("Get %d after rollback: %v", id, err)
			}
		}
		v, err := c.Get(s, pkOf(t, d1))
		if err != nil || string(v) != string(d1) {
			t.Errorf("document 1 after rolled-back replace: %s %v", bson.Raw(v), err)
		}
	})

	t.Run("rollback-after-failed-insert", func(t *testing.T) {
		s.Lock()
		s.Begin()
		if err := c.Insert(s, doc(4, 4, 4, "")); err != nil {
			t.Fatal(err)
		}
		// u: [8, 1]: the entry for 8 is written before 1 collides.
		err := c.Insert(s, doc(5, 5, bson.A{8, 1}, ""))
		asDup(t, err)
		s.Rollback()
		s.Unlock()
		check(t, d1)
		// The next commit does not apply the abandoned deltas either.
		d6 := doc(6, 6, 6, "six")
		insertAll(t, s, c, []bson.Raw{d6})
		check(t, d1, d6)
		inTxn(t, s, func() error { return c.Delete(s, pkOf(t, d6), d6) })
		check(t, d1)
	})

	t.Run("commit", func(t *testing.T) {
		d2 := doc(2, 5, 2, "yy")
		d3 := doc(3, bson.A{6, 7}, 3, "zzz")
		d1b := doc(1, 9, 9, "a much longer padding")
		inTxn(t, s, func() error {
			for _, d := range []bson.Raw{d2, d3} {
				if err := c.Insert(s, d); err != nil {
					return err
				}
			}
			return c.Replace(s, pkOf(t, d1), d1, d1b)
		})
		check(t, d1b, d2, d3)
		inTxn(t, s, func() error { return c.Delete(s, pkOf(t, d2), d2) })
		check(t, d1b, d3)
		// Two sessions' commits add up.
		s2 := env.session()
		d7 := doc(7, 7, 7, "seven")
		insertAll(t, s2, c, []bson.Raw{d7})
		check(t, d1b, d3, d7)
	})
}
