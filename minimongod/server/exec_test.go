package server

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

// execCase is a query on test.c with what it must return, worked out from
// fixtureDocs without the query package: the documents match keeps, in
// the order less gives (nil: any order), after skip and limit.
type execCase struct {
	name         string
	filter, sort bson.D
	hint         any
	skip, limit  int64
	match        func(fixtureDoc) bool
	less         func(x, y fixtureDoc) bool
}

// want returns the _ids the case must yield.
func (ec execCase) want() []int {
	var docs []fixtureDoc
	for _, d := range fixtureDocs() {
		if ec.match(d) {
			docs = append(docs, d)
		}
	}
	if ec.less != nil {
		sort.SliceStable(docs, func(i, j int) bool { return ec.less(docs[i], docs[j]) })
	}
	docs = docs[min(int(ec.skip), len(docs)):]
	if ec.limit > 0 {
		docs = docs[:min(int(ec.limit), len(docs))]
	}
	ids := make([]int, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	return ids
}

// execCases cover index and collection scans, sorts by an index and in
// memory, skip and limit, multikey duplicates and hints.
var execCases = []execCase{
	{name: "index equality", filter: bson.D{{Key: "a", Value: 3}},
		match: func(d fixtureDoc) bool { return d.a == 3 }},
	{name: "index equality with a residual filter", filter: bson.D{{Key: "a", Value: 3}, {Key: "c", Value: 3}},
		match: func(d fixtureDoc) bool { return d.a == 3 && d.c == 3 }},
	{name: "$in sorted in memory, skip and limit", filter: bson.D{{Key: "a", Value: bson.D{{Key: "$in", Value: bson.A{2, 1}}}}},
		sort: bson.D{{Key: "s", Value: -1}}, skip: 3, limit: 10,
		match: func(d fixtureDoc) bool { return d.a == 1 || d.a == 2 }, less: func(x, y fixtureDoc) bool { return x.s > y.s }},
	{name: "range in index order", filter: bson.D{{Key: "b", Value: bson.D{{Key: "$gte", Value: 50}, {Key: "$lt", Value: 60}}}},
		sort:  bson.D{{Key: "b", Value: 1}},
		match: func(d fixtureDoc) bool { return d.b >= 50 && d.b < 60 }, less: func(x, y fixtureDoc) bool { return x.b < y.b }},
	{name: "whole index backward with skip", sort: bson.D{{Key: "b", Value: -1}}, skip: 195,
		match: func(fixtureDoc) bool { return true }, less: func(x, y fixtureDoc) bool { return x.b > y.b }},
	{name: "collection sorted in memory past the end", sort: bson.D{{Key: "s", Value: 1}}, skip: 190, limit: 50,
		match: func(fixtureDoc) bool { return true }, less: func(x, y fixtureDoc) bool { return x.s < y.s }},
	{name: "skip past every match", filter: bson.D{{Key: "a", Value: 9}}, skip: 20,
		match: func(d fixtureDoc) bool { return d.a == 9 }},
	{name: "sort on two fields", filter: bson.D{{Key: "c", Value: bson.D{{Key: "$lte", Value: 1}}}},
		sort: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}, limit: 30,
		match: func(d fixtureDoc) bool { return d.c <= 1 },
		less:  func(x, y fixtureDoc) bool { return x.a < y.a || (x.a == y.a && x.b > y.b) }},
	{name: "_id range sorted on another field first", filter: bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 40}}}},
		sort:  bson.D{{Key: "a", Value: -1}, {Key: "_id", Value: 1}},
		match: func(d fixtureDoc) bool { return d.id < 40 },
		less:  func(x, y fixtureDoc) bool { return x.a > y.a || (x.a == y.a && x.id < y.id) }},
	{name: "multikey range yields each document once", filter: bson.D{{Key: "tags", Value: bson.D{{Key: "$gte", Value: 2}}}},
		match: func(fixtureDoc) bool { return true }},
	{name: "multikey $in on two values of one document", filter: bson.D{{Key: "tags", Value: bson.D{{Key: "$in", Value: bson.A{1, 11}}}}},
		match: func(d fixtureDoc) bool { return d.id%4 == 1 }},
	{name: "_id point", filter: bson.D{{Key: "_id", Value: 7}},
		match: func(d fixtureDoc) bool { return d.id == 7 }},
	{name: "_id point that fails the rest of the filter", filter: bson.D{{Key: "_id", Value: 7}, {Key: "a", Value: 8}},
		match: func(fixtureDoc) bool { return false }},
	{name: "_id point missing", filter: bson.D{{Key: "_id", Value: 1000}},
		match: func(fixtureDoc) bool { return false }},
	{name: "_id descending with limit", filter: bson.D{{Key: "u", Value: bson.D{{Key: "$exists", Value: true}}}},
		sort: bson.D{{Key: "_id", Value: -1}}, limit: 5,
		match: func(d fixtureDoc) bool { return d.hasU }, less: func(x, y fixtureDoc) bool { return x.id > y.id }},
	{name: "hinted index other than the filter's", filter: bson.D{{Key: "a", Value: 3}}, hint: "b_1",
		match: func(d fixtureDoc) bool { return d.a == 3 }},
	{name: "hinted index with its own bounds and order", filter: bson.D{{Key: "b", Value: bson.D{{Key: "$lt", Value: 30}}}, {Key: "a", Value: 3}},
		hint: bson.D{{Key: "b", Value: 1}}, sort: bson.D{{Key: "b", Value: -1}},
		match: func(d fixtureDoc) bool { return d.b < 30 && d.a == 3 }, less: func(x, y fixtureDoc) bool { return x.b > y.b }},
	{name: "$natural backward", filter: bson.D{{Key: "c", Value: 2}}, hint: bson.D{{Key: "$natural", Value: -1}},
		match: func(d fixtureDoc) bool { return d.c == 2 }, less: func(x, y fixtureDoc) bool { return x.id > y.id }},
}

// execCaseNamed returns the case of execCases called name.
func execCaseNamed(t *testing.T, name string) execCase {
	t.Helper()
	for _, ec := range execCases {
		if ec.name == name {
			return ec
		}
	}
	t.Fatalf("no execCase %q", name)
	return execCase{}
}

// The executor returns what each query must, whether it runs to the end
// in one go or in chunks with its WiredTiger cursors closed in between and
// each chunk on the other of two sessions, as a cursor's getMores may come
// from another connection.
func TestExecutorResults(t *testing.T) {
	tc, coll := openFixture(t)
	other := newTestConn(t, tc.c.s)
	sessions := []*storage.Session{tc.c.sess, other.c.sess}
	for _, ec := range execCases {
		want := ec.want()
		for _, chunk := range []int{0, 1, 7} {
			t.Run(ec.name+"/chunk"+itoa(chunk), func(t *testing.T) {
				ex := newTestExecutor(t, tc, coll, ec)
				var got []int
				for i := 0; ; i++ {
					ids, done := runChunk(t, ex, sessions[i%2], chunk)
					got = append(got, ids...)
					if done {
						break
					}
					if i > fixtureN {
						t.Fatalf("no end after %d chunks", i)
					}
				}
				if ec.less == nil {
					slices.Sort(got)
				}
				if !slices.Equal(got, want) {
					t.Errorf("got _ids %v\nwant    %v", got, want)
				}
				if ec.limit == 0 && ec.skip == 0 && ex.matched != int64(len(want)) {
					t.Errorf("matched = %d, want %d", ex.matched, len(want))
				}
				// In chunks the executor examines what it does in one
				// go, however often it detaches.
				oneGo := newTestExecutor(t, tc, coll, ec)
				runChunk(t, oneGo, sessions[0], 0)
				got2, want2 := [2]int64{ex.totalKeys, ex.totalDocs}, [2]int64{oneGo.totalKeys, oneGo.totalDocs}
				if got2 != want2 {
					t.Errorf("examined keys and documents %v in chunks of %d, %v in one go", got2, chunk, want2)
				}
			})
		}
	}
}

// newTestExecutor plans ec on coll as find does.
func newTestExecutor(t *testing.T, tc *testConn, coll *storage.Collection, ec execCase) *executor {
	t.Helper()
	m, srt := compile(t, ec.filter, ec.sort)
	var h *queryHint
	if ec.hint != nil {
		body := marshalDoc(t, bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: ec.hint}})
		var err error
		if h, err = hintArg(&request{db: "test", name: "find", body: bsoncore.Document(body)}, coll); err != nil || h == nil {
			t.Fatalf("hint %v: %v, %v", ec.hint, h, err)
		}
	}
	return newExecutor(tc.c.s, coll, m, srt, ec.skip, ec.limit, h)
}

// runChunk takes up to n results (0: all) from ex on sess, holding the
// engine's shared lock as a request does, then detaches; done is true at
// the end.
func runChunk(t *testing.T, ex *executor, sess *storage.Session, n int) (ids []int, done bool) {
	t.Helper()
	sess.Lock()
	defer sess.Unlock()
	defer ex.detach()
	for n == 0 || len(ids) < n {
		_, doc, err := ex.next(sess)
		if err == wt.ErrNotFound {
			return ids, true
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		id, ok := bson.Raw(doc).Lookup("_id").AsInt64OK()
		if !ok {
			t.Fatalf("document without an integer _id: %v", bson.Raw(doc))
		}
		ids = append(ids, int(id))
	}
	return ids, false
}

// A sort the scan does not give is done in memory within
// internalQueryExecMaxBlockingSortBytes, and counted in scanAndOrder once
// it succeeds; a sort an index gives needs no memory and is not limited.
func TestBlockingSortMemoryLimit(t *testing.T) {
	tc, _ := openFixture(t)
	const limit = 2000 // bytes: the 20 documents with a == 3, not all 200
	tc.must("admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryExecMaxBlockingSortBytes", Value: limit}})
	cases := []struct {
		name         string
		filter, sort bson.D
		wantN        int
		wantErr      bool
		wantInMemory bool
	}{
		{"all documents sorted in memory", nil, bson.D{{Key: "s", Value: 1}}, 0, true, false},
		{"a few documents sorted in memory", bson.D{{Key: "a", Value: 3}}, bson.D{{Key: "s", Value: 1}}, 20, false, true},
		{"all documents in index order", nil, bson.D{{Key: "b", Value: 1}}, fixtureN, false, false},
		{"all documents in _id order", nil, bson.D{{Key: "_id", Value: -1}}, fixtureN, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := tc.c.s.stats.scanAndOrder.Load()
			cmd := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: marshalDoc(t, c.filter)}, {Key: "sort", Value: c.sort}, {Key: "batchSize", Value: fixtureN + 1}}
			if c.wantErr {
				code, msg := tc.fails("test", cmd)
				if code != mongoerr.CodeQueryExceededMemory || !strings.Contains(msg, "Sort exceeded memory limit of 2000 bytes") {
					t.Errorf("error %d %q, want QueryExceededMemory naming the 2000-byte limit", code, msg)
				}
			} else if b := readBatch(t, tc.must("test", cmd), "firstBatch"); len(b.ids) != c.wantN || b.id != 0 {
				t.Errorf("%d documents, cursor %d; want %d and no cursor", len(b.ids), b.id, c.wantN)
			}
			sorts := tc.c.s.stats.scanAndOrder.Load() - before
			if (sorts == 1) != c.wantInMemory || sorts > 1 {
				t.Errorf("scanAndOrder went up by %d, want an in-memory sort: %v", sorts, c.wantInMemory)
			}
		})
	}
}
