package server

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/query"
	"wtd/minimongod/storage"
)

// fixtureN is how many documents the planner, executor and explain tests
// query.
const fixtureN = 200

// fixtureDoc is one document of test.c as the tests know it: _id i, a
// i%10, b i, c i%7, tags [i%4, 10+i%4] (a multikey index), s a string
// unique per document in an order unrelated to _id, and u present only on
// every fifth document.
type fixtureDoc struct {
	id, a, b, c int
	tags        [2]int
	s           string
	hasU        bool
}

func fixtureDocs() []fixtureDoc {
	docs := make([]fixtureDoc, fixtureN)
	for i := range docs {
		docs[i] = fixtureDoc{id: i, a: i % 10, b: i, c: i % 7, tags: [2]int{i % 4, 10 + i%4},
			s: fmt.Sprintf("s%03d", (i*37)%fixtureN), hasU: i%5 == 0}
	}
	return docs
}

func (d fixtureDoc) bson() bson.D {
	doc := bson.D{{Key: "_id", Value: d.id}, {Key: "a", Value: d.a}, {Key: "b", Value: d.b}, {Key: "c", Value: d.c},
		{Key: "tags", Value: bson.A{d.tags[0], d.tags[1]}}, {Key: "s", Value: d.s}}
	if d.hasU {
		doc = append(doc, bson.E{Key: "u", Value: d.id})
	}
	return doc
}

// fixtureIndexes are test.c's secondary indexes, in creation order.
var fixtureIndexes = []bson.D{
	{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}},
	{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b_1"}},
	{{Key: "key", Value: bson.D{{Key: "tags", Value: 1}}}, {Key: "name", Value: "tags_1"}},
	{{Key: "key", Value: bson.D{{Key: "c", Value: 1}, {Key: "b", Value: 1}}}, {Key: "name", Value: "c_1_b_1"}},
}

// openFixture opens an in-process server whose test.c holds fixtureDocs,
// inserted and indexed with the insert and createIndexes commands, and
// returns a connection to it and the collection.
func openFixture(t *testing.T) (*testConn, *storage.Collection) {
	t.Helper()
	s := openTestServer(t, "--wiredTigerCacheSizeGB", "0.25")
	tc := newTestConn(t, s)
	var docs bson.A
	for _, d := range fixtureDocs() {
		docs = append(docs, d.bson())
	}
	tc.must("test", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}})
	var specs bson.A
	for _, ix := range fixtureIndexes {
		specs = append(specs, ix)
	}
	tc.must("test", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: specs}})
	coll := s.eng.Collection("test", "c")
	if coll == nil || coll.Count() != fixtureN {
		t.Fatalf("test.c after inserting %d documents: %v", fixtureN, coll)
	}
	if len(coll.Indexes()) != len(fixtureIndexes) {
		t.Fatalf("test.c has %d secondary indexes, want %d", len(coll.Indexes()), len(fixtureIndexes))
	}
	return tc, coll
}

// compile returns the matcher and sort (nil for an empty spec) of a query.
func compile(t *testing.T, filter, sortSpec bson.D) (*query.Matcher, *query.Sort) {
	t.Helper()
	m, err := query.Compile(marshalDoc(t, filter))
	if err != nil {
		t.Fatalf("compile filter %v: %v", filter, err)
	}
	if len(sortSpec) == 0 {
		return m, nil
	}
	srt, err := compileSort(marshalDoc(t, sortSpec))
	if err != nil {
		t.Fatalf("compile sort %v: %v", sortSpec, err)
	}
	return m, srt
}

func marshalDoc(t testing.TB, d bson.D) bson.Raw {
	t.Helper()
	if d == nil {
		d = bson.D{}
	}
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
