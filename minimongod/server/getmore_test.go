package server

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/mongoerr"
)

// find and getMore hand out a query's results in batches of the sizes
// asked for (101 first by default, then no limit; a first batch of 0 is
// empty with the cursor open), close the cursor with the last batch, and
// return across the batches exactly what the query yields at once.
func TestFindGetMoreBatches(t *testing.T) {
	tc, _ := openFixture(t)
	inSorted := execCaseNamed(t, "$in sorted in memory, skip and limit")
	inSorted.skip, inSorted.limit = 3, 23 // 37 left after skip: 23 of them
	inSortedToFullBatch := inSorted
	inSortedToFullBatch.limit = 22 // 4 + 6 + 6 + 6
	all := execCase{name: "all by b", sort: bson.D{{Key: "b", Value: 1}},
		match: func(fixtureDoc) bool { return true }, less: func(x, y fixtureDoc) bool { return x.b < y.b }}
	limit5 := all
	limit5.limit = 5
	cases := []struct {
		name       string
		q          execCase
		first      any   // find's batchSize; nil: none
		more       any   // getMore's batchSize; nil: none
		single     bool  // singleBatch
		wantSizes  []int // each reply's batch size, the last with id 0
		wantOpened bool  // a cursor stays open after the first batch
	}{
		{"limit over several batches", inSorted, 4, 6, false, []int{4, 6, 6, 6, 1}, true},
		{"limit ending with a full batch", inSortedToFullBatch, 4, 6, false, []int{4, 6, 6, 6}, true},
		{"default first batch, then the rest", all, nil, nil, false, []int{101, 99}, true},
		{"first batch of 0", all, 0, nil, false, []int{0, 200}, true},
		{"first batch of 0 with a limit", limit5, 0, 2, false, []int{0, 2, 2, 1}, true},
		{"single batch", all, 5, nil, true, []int{5}, false},
		{"limit equal to the batch", limit5, 5, nil, false, []int{5}, false},
		{"batch larger than the results", limit5, 50, nil, false, []int{5}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			find := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: marshalDoc(t, c.q.filter)}}
			if c.q.sort != nil {
				find = append(find, bson.E{Key: "sort", Value: c.q.sort})
			}
			find = append(find, bson.E{Key: "skip", Value: c.q.skip}, bson.E{Key: "limit", Value: c.q.limit})
			if c.first != nil {
				find = append(find, bson.E{Key: "batchSize", Value: c.first})
			}
			if c.single {
				find = append(find, bson.E{Key: "singleBatch", Value: true})
			}
			b := readBatch(t, tc.must("test", find), "firstBatch")
			if (b.id != 0) != c.wantOpened {
				t.Errorf("first batch left cursor id %d, want one open: %v", b.id, c.wantOpened)
			}
			sizes, got := []int{len(b.ids)}, b.ids
			for b.id != 0 {
				if len(sizes) > fixtureN+1 {
					t.Fatalf("cursor still open after %d batches", len(sizes))
				}
				more := bson.D{{Key: "getMore", Value: b.id}, {Key: "collection", Value: "c"}}
				if c.more != nil {
					more = append(more, bson.E{Key: "batchSize", Value: c.more})
				}
				b = readBatch(t, tc.must("test", more), "nextBatch")
				sizes, got = append(sizes, len(b.ids)), append(got, b.ids...)
			}
			if !slices.Equal(sizes, c.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, c.wantSizes)
			}
			want := c.q.want()
			if c.single {
				want = want[:c.wantSizes[0]] // the rest is never sent
			}
			if !slices.Equal(got, want) {
				t.Errorf("_ids over the batches %v\nwant %v", got, want)
			}
			if n := tc.c.s.cursors.count(); n != 0 {
				t.Errorf("%d cursors left open after the last batch", n)
			}
		})
	}
}

// A getMore is refused for an unknown cursor, another namespace, and a
// collection dropped since the cursor was opened (which closes it); a
// projection applies to every batch.
func TestGetMoreRefusalsAndProjection(t *testing.T) {
	tc, _ := openFixture(t)
	open := func(coll string, batch int) int64 {
		t.Helper()
		b := readBatch(t, tc.must("test", bson.D{{Key: "find", Value: coll}, {Key: "batchSize", Value: batch}}), "firstBatch")
		if b.id == 0 {
			t.Fatalf("find on %s with batchSize %d closed its cursor", coll, batch)
		}
		return b.id
	}
	getMore := func(id int64, coll string) bson.D {
		return bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: coll}}
	}
	if code, msg := tc.fails("test", getMore(12345, "c")); code != mongoerr.CodeCursorNotFound {
		t.Errorf("unknown cursor: %d %q, want CursorNotFound", code, msg)
	}
	id := open("c", 2)
	if code, msg := tc.fails("test", getMore(id, "other")); code != mongoerr.CodeUnauthorized {
		t.Errorf("getMore on another collection: %d %q, want Unauthorized", code, msg)
	}
	tc.must("test", bson.D{{Key: "insert", Value: "gone"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}}}})
	gone := open("gone", 1)
	tc.must("test", bson.D{{Key: "drop", Value: "gone"}})
	if code, msg := tc.fails("test", getMore(gone, "gone")); code != mongoerr.CodeQueryPlanKilled {
		t.Errorf("getMore after drop: %d %q, want QueryPlanKilled", code, msg)
	}
	if code, _ := tc.fails("test", getMore(gone, "gone")); code != mongoerr.CodeCursorNotFound {
		t.Errorf("second getMore after drop: %d, want CursorNotFound (the cursor is closed)", code)
	}

	reply := tc.must("test", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 4}}},
		{Key: "projection", Value: bson.D{{Key: "s", Value: 1}}}, {Key: "batchSize", Value: 3}})
	for key := "firstBatch"; ; key = "nextBatch" {
		arr := lookupPath(t, reply, "cursor."+key).Array()
		vals, _ := arr.Values()
		for _, v := range vals {
			elems, _ := v.Document().Elements()
			if len(elems) != 2 || elems[0].Key() != "_id" || elems[1].Key() != "s" {
				t.Fatalf("%s document %v, want only _id and s", key, v)
			}
		}
		id := intAt(t, reply, "cursor.id")
		if id == 0 {
			break
		}
		reply = tc.must("test", getMore(id, "c"))
	}
}

// An aggregate's cursor batchSize is its first batch's size too: 0 opens
// the cursor with nothing in the first batch, and the getMores bring the
// pipeline's results.
func TestAggregateFirstBatchSizes(t *testing.T) {
	tc, _ := openFixture(t)
	for _, c := range []struct {
		batch     int
		wantSizes []int
	}{{0, []int{0, 20}}, {7, []int{7, 13}}, {101, []int{20}}} {
		reply := tc.must("test", bson.D{{Key: "aggregate", Value: "c"},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 6}}}}}},
			{Key: "cursor", Value: bson.D{{Key: "batchSize", Value: c.batch}}}})
		b := readBatch(t, reply, "firstBatch")
		sizes, got := []int{len(b.ids)}, b.ids
		for b.id != 0 && len(sizes) <= fixtureN {
			b = readBatch(t, tc.must("test", bson.D{{Key: "getMore", Value: b.id}, {Key: "collection", Value: "c"}}), "nextBatch")
			sizes, got = append(sizes, len(b.ids)), append(got, b.ids...)
		}
		slices.Sort(got)
		want := execCase{match: func(d fixtureDoc) bool { return d.a == 6 }}.want()
		if !slices.Equal(sizes, c.wantSizes) || !slices.Equal(got, want) {
			t.Errorf("batchSize %d: batches %v with _ids %v; want %v with %v", c.batch, sizes, got, c.wantSizes, want)
		}
	}
}
