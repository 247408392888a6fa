package itest

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// ddlCrashRounds is how many times TestDDLAtomicAcrossKill kills the
// server during catalog changes.
const ddlCrashRounds = 5

// Catalog changes are atomic across kill -9: a two-index createIndexes
// leaves both indexes or neither, a dropDatabase all of the database or
// none of it, and every index the catalog lists is complete. Each round
// kills the server at a random moment of a run of catalog changes.
func TestDDLAtomicAcrossKill(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	dbpath := t.TempDir()
	const docs = 6000
	states := map[string]int{}
	for round := 0; round < ddlCrashRounds; round++ {
		s := startAt(t, dbpath, "--wiredTigerCacheSizeGB", "0.25")
		checkDDLState(t, s, docs, states)
		db := fmt.Sprintf("r%d", round)
		batch := make([]any, docs)
		for i := range batch {
			batch[i] = bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 97}, {Key: "b", Value: i}}
		}
		for _, coll := range []string{"c0", "c1", "c2"} {
			if _, err := s.db(db).Collection(coll).InsertMany(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			two := []mongo.IndexModel{{Keys: bson.D{{Key: "a", Value: 1}}}, {Keys: bson.D{{Key: "b", Value: -1}}}}
			for _, coll := range []string{"c0", "c1", "c2"} {
				if _, err := s.db(db).Collection(coll).Indexes().CreateMany(ctx, two); err != nil {
					return
				}
			}
			if round > 0 {
				// Like the DDL above, this may meet the kill: an error
				// here ends the round's work, as there.
				if err := s.db(fmt.Sprintf("r%d", round-1)).Drop(ctx); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		noErr(t, s.cmd.Process.Signal(syscall.SIGKILL))
		<-s.done
		<-done
	}
	s := startAt(t, dbpath)
	checkDDLState(t, s, docs, states)
	t.Logf("after %d kills: %v", ddlCrashRounds, states)
}

// checkDDLState checks every database r* and counts what it found in
// states: a database has its three collections or none, each collection
// its _id index alone or with both others, and every index answers with
// all the documents.
func checkDDLState(t *testing.T, s *server, docs int, states map[string]int) {
	t.Helper()
	names, err := s.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range names {
		if db[0] != 'r' {
			continue
		}
		colls, err := s.db(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		if len(colls) != 3 {
			t.Errorf("database %s has collections %v after kill -9, want all three", db, colls)
			continue
		}
		for _, coll := range colls {
			c := s.db(db).Collection(coll)
			specs, err := c.Indexes().ListSpecifications(ctx)
			if err != nil {
				t.Fatal(err)
			}
			states[fmt.Sprintf("indexes=%d", len(specs))]++
			if len(specs) != 1 && len(specs) != 3 {
				t.Errorf("%s.%s has %d indexes after kill -9, want 1 or 3", db, coll, len(specs))
			}
			for _, sp := range specs {
				res := s.run(t, db, bson.D{{Key: "count", Value: coll}, {Key: "hint", Value: sp.Name}})
				if n := num(res, "n"); n != int64(docs) {
					t.Errorf("%s.%s index %s counts %d, want %d", db, coll, sp.Name, n, docs)
				}
			}
		}
	}
}
