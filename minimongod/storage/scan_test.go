package storage

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/keyenc"
	"wtd/minimongod/wt"
)

// scanEntry is one expected entry of a scanned table: its position in the
// table (order), the part bounds are compared with (cmp), and the table key
// the scan yields (pk).
type scanEntry struct{ order, cmp, pk []byte }

// bruteForce lists the pks of entries inside any of ranges, in scan order.
func bruteForce(entries []scanEntry, ranges []Range, reverse bool) [][]byte {
	sorted := append([]scanEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].order, sorted[j].order) < 0 })
	in := func(k []byte) bool {
		if len(ranges) == 0 {
			return true
		}
		for _, r := range ranges {
			if r.Lo.Key != nil {
				c := bytes.Compare(k, r.Lo.Key)
				if c < 0 || (c == 0 && !r.Lo.Inclusive) {
					continue
				}
			}
			if r.Hi.Key != nil {
				c := bytes.Compare(k, r.Hi.Key)
				if c > 0 || (c == 0 && !r.Hi.Inclusive) {
					continue
				}
			}
			return true
		}
		return false
	}
	var out [][]byte
	for _, e := range sorted {
		if in(e.cmp) {
			out = append(out, e.pk)
		}
	}
	if reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// resumeMode is how a scan is driven: detach every `every` keys (0: never),
// and whether each resumption uses the next of several sessions.
type resumeMode struct {
	name     string
	every    int
	rotate   bool
	detachAt int // additionally detach once after this many keys (-1: never)
}

var resumeModes = []resumeMode{
	{"straight", 0, false, -1},
	{"detach-each", 1, false, -1},
	{"detach-each-other-session", 1, true, -1},
	{"detach-every-3-other-session", 3, true, -1},
	{"detach-before-first", 0, true, 0},
	{"detach-once-mid", 0, true, 7},
}

// runScan drives sc according to m over sessions and returns the pks.
func runScan(t *testing.T, sessions []*Session, sc *Scan, m resumeMode) [][]byte {
	t.Helper()
	si := 0
	s := sessions[0]
	var out [][]byte
	detach := func() {
		sc.Detach()
		if m.rotate {
			si = (si + 1) % len(sessions)
			s = sessions[si]
		}
	}
	if m.detachAt == 0 {
		detach()
	}
	for {
		s.Lock()
		pk, doc, err := sc.Next(s)
		if err == wt.ErrNotFound {
			s.Unlock()
			// A finished scan stays finished, even after Detach.
			sc.Detach()
			if _, _, err := sc.Next(s); err != wt.ErrNotFound {
				t.Fatalf("Next after the end: %v", err)
			}
			return out
		}
		if err != nil {
			s.Unlock()
			t.Fatalf("scan after %d keys: %v", len(out), err)
		}
		checkDocKey(t, pk, doc)
		out = append(out, append([]byte(nil), pk...))
		if m.every > 0 && len(out)%m.every == 0 || len(out) == m.detachAt {
			detach()
		}
		s.Unlock()
		if len(out) > 100000 {
			t.Fatal("scan does not end")
		}
	}
}

func showKeys(keys [][]byte) string {
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%x", k)
	}
	return b.String()
}

func compareScan(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("scan yielded %d keys, want %d\ngot  %s\nwant %s", len(got), len(want), showKeys(got), showKeys(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("key %d: got %x, want %x\ngot  %s\nwant %s", i, got[i], want[i], showKeys(got), showKeys(want))
		}
	}
}

func incl(k []byte) Bound { return Bound{Key: k, Inclusive: true} }
func excl(k []byte) Bound { return Bound{Key: k} }

func point(k []byte) Range { return Range{Lo: incl(k), Hi: incl(k)} }

type scanCase struct {
	name   string
	ranges []Range
}

func runScanCases(t *testing.T, sessions []*Session, c *Collection, ix *Index, entries []scanEntry, cases []scanCase) {
	t.Helper()
	for _, tc := range cases {
		for _, reverse := range []bool{false, true} {
			want := bruteForce(entries, tc.ranges, reverse)
			for _, m := range resumeModes {
				t.Run(fmt.Sprintf("%s/reverse=%v/%s", tc.name, reverse, m.name), func(t *testing.T) {
					sc := NewScan(c, ix, tc.ranges, reverse)
					got := runScan(t, sessions, sc, m)
					compareScan(t, got, want)
					if ix == nil && sc.Examined != int64(len(got)) {
						t.Errorf("Examined = %d, want %d", sc.Examined, len(got))
					}
				})
			}
		}
	}
}

func TestScanCollectionTable(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	s := env.session()
	sessions := []*Session{s, env.session(), env.session()}

	var docs []bson.Raw
	var entries []scanEntry
	add := func(id any) {
		d := marshal(t, bson.D{{Key: "_id", Value: id}, {Key: "x", Value: fmt.Sprint(id)}})
		docs = append(docs, d)
		k := enc(t, id)
		entries = append(entries, scanEntry{order: k, cmp: k, pk: k})
	}
	// Even numbers 0..98 (odd ones are bounds that do not exist), a few
	// negative longs, doubles and strings to cross type brackets.
	for i := 0; i < 100; i += 2 {
		add(int32(i))
	}
	add(int64(-5))
	add(-1.5)
	add(3.25)
	for _, s := range []string{"a", "b", "bb", "c"} {
		add(s)
	}
	insertAll(t, s, c, docs)

	cases := []scanCase{
		{"all", nil},
		{"all-explicit-unbounded", []Range{{}}},
		{"incl-existing", []Range{{Lo: incl(enc(t, 10)), Hi: incl(enc(t, 20))}}},
		{"excl-existing", []Range{{Lo: excl(enc(t, 10)), Hi: excl(enc(t, 20))}}},
		{"incl-lo-excl-hi", []Range{{Lo: incl(enc(t, 10)), Hi: excl(enc(t, 20))}}},
		{"excl-lo-incl-hi", []Range{{Lo: excl(enc(t, 10)), Hi: incl(enc(t, 20))}}},
		{"incl-missing", []Range{{Lo: incl(enc(t, 11)), Hi: incl(enc(t, 21))}}},
		{"excl-missing", []Range{{Lo: excl(enc(t, 11)), Hi: excl(enc(t, 21))}}},
		{"lo-only", []Range{{Lo: excl(enc(t, 90))}}},
		{"lo-only-incl", []Range{{Lo: incl(enc(t, 90))}}},
		{"hi-only", []Range{{Hi: excl(enc(t, 2))}}},
		{"hi-only-incl", []Range{{Hi: incl(enc(t, 2))}}},
		{"lo-below-everything", []Range{{Lo: incl(enc(t, -100)), Hi: incl(enc(t, 4))}}},
		{"hi-above-everything", []Range{{Lo: incl(enc(t, "bb")), Hi: incl(enc(t, "zzz"))}}},
		{"across-brackets", []Range{{Lo: excl(enc(t, 94)), Hi: excl(enc(t, "bb"))}}},
		{"point-existing", []Range{point(enc(t, 42))}},
		{"point-long-equals-int", []Range{point(enc(t, int64(42)))}},
		{"point-missing", []Range{point(enc(t, 43))}},
		{"empty-between-keys", []Range{{Lo: incl(enc(t, 11)), Hi: incl(enc(t, 11.5))}}},
		{"empty-excl-adjacent", []Range{{Lo: excl(enc(t, 10)), Hi: excl(enc(t, 12))}}},
		{"empty-above-all", []Range{{Lo: excl(enc(t, "c"))}}},
		{"empty-below-all", []Range{{Hi: excl(enc(t, int64(-5)))}}},
		{"in-points", []Range{point(enc(t, 4)), point(enc(t, 5)), point(enc(t, 50)), point(enc(t, 98)), point(enc(t, "b"))}},
		{"in-all-missing", []Range{point(enc(t, 1)), point(enc(t, 3)), point(enc(t, "zz"))}},
		{"disjoint", []Range{
			{Hi: excl(enc(t, 10))},
			{Lo: excl(enc(t, 20)), Hi: incl(enc(t, 30))},
			{Lo: incl(enc(t, 33)), Hi: incl(enc(t, 33))},
			{Lo: incl(enc(t, 90)), Hi: excl(enc(t, "b"))},
			{Lo: incl(enc(t, "bb"))},
		}},
		{"disjoint-adjacent", []Range{
			{Lo: incl(enc(t, 10)), Hi: excl(enc(t, 14))},
			{Lo: incl(enc(t, 14)), Hi: incl(enc(t, 16))},
			{Lo: excl(enc(t, 16)), Hi: incl(enc(t, 18))},
		}},
		{"disjoint-some-empty", []Range{
			{Lo: incl(enc(t, 1)), Hi: incl(enc(t, 1.5))},
			{Lo: incl(enc(t, 6)), Hi: incl(enc(t, 8))},
			{Lo: excl(enc(t, 8)), Hi: excl(enc(t, 10))},
			{Lo: incl(enc(t, 60)), Hi: incl(enc(t, 61))},
		}},
	}
	runScanCases(t, sessions, c, nil, entries, cases)
}

func TestScanEmptyTable(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "empty")
	ix := mustIndex(t, env.e, c, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}})
	sessions := []*Session{env.session(), env.session()}
	cases := []scanCase{
		{"all", nil},
		{"bounded", []Range{{Lo: incl(enc(t, 1)), Hi: incl(enc(t, 5))}}},
		{"lo-only", []Range{{Lo: excl(enc(t, 1))}}},
		{"hi-only", []Range{{Hi: excl(enc(t, 1))}}},
		{"points", []Range{point(enc(t, 1)), point(enc(t, 2))}},
	}
	runScanCases(t, sessions, c, nil, nil, cases)
	runScanCases(t, sessions, c, ix, nil, cases)
}

func TestScanIndexDuplicates(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "dups")
	ix := mustIndex(t, env.e, c, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}})
	cix := mustIndex(t, env.e, c, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "a_1_b_1"}})
	s := env.session()
	sessions := []*Session{s, env.session(), env.session()}

	var docs []bson.Raw
	var entries, centries1, centries2 []scanEntry
	for i := 0; i < 400; i++ {
		d := bson.D{{Key: "_id", Value: int32(i)}}
		var a any
		switch {
		case i%4 != 3: // 300 documents share a: 5
			a = int32(5)
		case i%40 == 3:
			a = nil // missing field: indexed as null
		case i%40 == 7:
			a = "s"
		default:
			a = int32(i % 10) // 3 or 7
		}
		if a != nil {
			d = append(d, bson.E{Key: "a", Value: a})
		}
		b := int32((i * 7) % 13)
		d = append(d, bson.E{Key: "b", Value: b})
		raw := marshal(t, d)
		docs = append(docs, raw)
		pk := enc(t, int32(i))
		av := enc(t, a)
		entries = append(entries, scanEntry{order: append(append([]byte(nil), av...), pk...), cmp: av, pk: pk})
		ab := append(append([]byte(nil), av...), enc(t, b)...)
		corder := append(append([]byte(nil), ab...), pk...)
		centries1 = append(centries1, scanEntry{order: corder, cmp: av, pk: pk})
		centries2 = append(centries2, scanEntry{order: corder, cmp: ab, pk: pk})
	}
	insertAll(t, s, c, docs)
	if ix.Multikey() {
		t.Error("index over scalars reports multikey")
	}

	cases := []scanCase{
		{"all", nil},
		{"eq-dup", []Range{point(enc(t, 5))}},
		{"eq-dup-as-double", []Range{point(enc(t, 5.0))}},
		{"eq-null", []Range{point(enc(t, nil))}},
		{"eq-missing", []Range{point(enc(t, 6))}},
		{"gt-dup", []Range{{Lo: excl(enc(t, 5))}}},
		{"gte-dup", []Range{{Lo: incl(enc(t, 5))}}},
		{"lt-dup", []Range{{Hi: excl(enc(t, 5))}}},
		{"lte-dup", []Range{{Hi: incl(enc(t, 5))}}},
		{"excl-both-around-dup", []Range{{Lo: excl(enc(t, 3)), Hi: excl(enc(t, 7))}}},
		{"excl-lo-dup-incl-hi", []Range{{Lo: excl(enc(t, 5)), Hi: incl(enc(t, 7))}}},
		{"incl-lo-excl-hi-dup", []Range{{Lo: incl(enc(t, 3)), Hi: excl(enc(t, 5))}}},
		{"empty-excl-dup-both", []Range{{Lo: excl(enc(t, 5)), Hi: excl(enc(t, 6))}}},
		{"empty-excl-dup-hi", []Range{{Lo: excl(enc(t, 4)), Hi: excl(enc(t, 5))}}},
		{"missing-bounds", []Range{{Lo: incl(enc(t, 4.5)), Hi: incl(enc(t, 5.5))}}},
		{"in", []Range{point(enc(t, nil)), point(enc(t, 3)), point(enc(t, 5)), point(enc(t, 6)), point(enc(t, "s"))}},
		{"disjoint", []Range{{Hi: excl(enc(t, 5))}, {Lo: excl(enc(t, 5))}}},
	}
	runScanCases(t, sessions, c, ix, entries, cases)

	// A bound on a prefix of a compound key covers every entry with it.
	runScanCases(t, sessions, c, cix, centries1, []scanCase{
		{"prefix-eq", []Range{point(enc(t, 5))}},
		{"prefix-gt", []Range{{Lo: excl(enc(t, 5))}}},
		{"prefix-lt", []Range{{Hi: excl(enc(t, 5))}}},
		{"prefix-in", []Range{point(enc(t, 3)), point(enc(t, 5))}},
	})
	a5 := enc(t, 5)
	runScanCases(t, sessions, c, cix, centries2, []scanCase{
		{"tuple-eq", []Range{point(keyenc.Append(append([]byte(nil), a5...), val(t, 4)))}},
		{"tuple-range", []Range{{
			Lo: excl(keyenc.Append(append([]byte(nil), a5...), val(t, 2))),
			Hi: incl(keyenc.Append(append([]byte(nil), a5...), val(t, 9))),
		}}},
	})
}

// TestScanResumeAfterChanges checks that a detached scan resumes after the
// last key it returned even when that key, or its neighbours, change.
func TestScanResumeAfterChanges(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			env := newEnv(t)
			c := mustColl(t, env.e, "db", "c")
			s1, s2 := env.session(), env.session()
			doc := func(id int) bson.Raw { return marshal(t, bson.D{{Key: "_id", Value: int32(id)}}) }
			var docs []bson.Raw
			for i := 10; i <= 50; i += 10 {
				docs = append(docs, doc(i))
			}
			insertAll(t, s1, c, docs)

			sc := NewScan(c, nil, nil, reverse)
			s1.Lock()
			if _, _, err := sc.Next(s1); err != nil {
				t.Fatal(err)
			}
			pk, _, err := sc.Next(s1)
			if err != nil {
				t.Fatal(err)
			}
			second, current, next := 20, 20, 30
			if reverse {
				second, current, next = 40, 40, 30
			}
			if !bytes.Equal(pk, enc(t, int32(second))) {
				t.Fatalf("second key %x, want %d", pk, second)
			}
			sc.Detach()
			s1.Unlock()

			// Delete the key returned last and the one after it; add keys
			// behind the position (must not be seen) and ahead of it.
			behind, ahead := current-5, next-5
			if reverse {
				behind, ahead = current+5, next+5
			}
			inTxn(t, s2, func() error {
				for _, id := range []int{current, next} {
					if err := c.Delete(s2, enc(t, int32(id)), doc(id)); err != nil {
						return err
					}
				}
				for _, id := range []int{behind, ahead} {
					if err := c.Insert(s2, doc(id)); err != nil {
						return err
					}
				}
				return nil
			})
			s2.Lock()
			got := drain(t, s2, sc)
			s2.Unlock()
			want := [][]byte{enc(t, int32(ahead)), enc(t, 40), enc(t, 50)}
			if reverse {
				want = [][]byte{enc(t, int32(ahead)), enc(t, 20), enc(t, 10)}
			}
			compareScan(t, got, want)
		})
	}
}

// TestScanIndexAfterDelete: an index entry whose document went
// away while the scan was detached is not returned.
func TestScanIndexAfterDelete(t *testing.T) {
	env := newEnv(t)
	c := mustColl(t, env.e, "db", "c")
	ix := mustIndex(t, env.e, c, bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}})
	s := env.session()
	var docs []bson.Raw
	for i := 0; i < 10; i++ {
		docs = append(docs, marshal(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(1)}}))
	}
	insertAll(t, s, c, docs)
	sc := NewScan(c, ix, []Range{point(enc(t, 1))}, false)
	s.Lock()
	for i := 0; i < 3; i++ {
		if _, _, err := sc.Next(s); err != nil {
			t.Fatal(err)
		}
	}
	sc.Detach()
	s.Unlock()
	inTxn(t, s, func() error {
		for _, i := range []int{3, 4, 7} {
			if err := c.Delete(s, enc(t, int32(i)), docs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	s.Lock()
	got := drain(t, s, sc)
	s.Unlock()
	compareScan(t, got, [][]byte{enc(t, 5), enc(t, 6), enc(t, 8), enc(t, 9)})
}
