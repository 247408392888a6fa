package itest

import (
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// durableArgs make the journal flusher and the checkpoints rare, so that
// only the write concern can make a write durable before the reply.
var durableArgs = []string{"--setParameter", "journalCommitInterval=500", "--syncdelay", "3600"}

// durableCase is one write command, and what it must have done for good
// once acknowledged with a journaling write concern.
type durableCase struct {
	name  string
	setup []bson.D // documents the command works on, inserted with j: true first
	cmd   func(coll string) bson.D
	nPath string // where the reply counts what the command did ("n" unless given)
	n     int64
	dups  int // duplicate key errors the reply reports
	// exist must be found after a restart, updated found with v: 1,
	// gone not found.
	exist, updated, gone []string
}

func doc(id string, kv ...any) bson.D {
	d := bson.D{{Key: "_id", Value: id}}
	for i := 0; i+1 < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

var setV1 = bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}}

func insertCmd(coll string, ordered bool, docs ...bson.D) bson.D {
	a := bson.A{}
	for _, d := range docs {
		a = append(a, d)
	}
	return bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: a}, {Key: "ordered", Value: ordered}}
}

func updateCmd(coll string, stmts ...bson.D) bson.D {
	a := bson.A{}
	for _, s := range stmts {
		a = append(a, s)
	}
	return bson.D{{Key: "update", Value: coll}, {Key: "updates", Value: a}}
}

func deleteCmd(coll string, stmts ...bson.D) bson.D {
	a := bson.A{}
	for _, s := range stmts {
		a = append(a, s)
	}
	return bson.D{{Key: "delete", Value: coll}, {Key: "deletes", Value: a}}
}

func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// durableCases cover every write command and each way it writes: one
// transaction for a batch, one per document after a failed document, per
// matching document for multi updates and deletes, several statements in
// one command, upserts.
var durableCases = []durableCase{
	{name: "insert", cmd: func(c string) bson.D { return insertCmd(c, true, doc("insert")) }, n: 1, exist: []string{"insert"}},
	{name: "insert ordered", n: 3, exist: []string{"ordered1", "ordered2", "ordered3"},
		cmd: func(c string) bson.D { return insertCmd(c, true, doc("ordered1"), doc("ordered2"), doc("ordered3")) }},
	{name: "insert ordered, a duplicate last", setup: []bson.D{doc("dup1")}, n: 1, dups: 1, exist: []string{"ordered4"},
		cmd: func(c string) bson.D { return insertCmd(c, true, doc("ordered4"), doc("dup1")) }},
	{name: "insert unordered, a duplicate between", setup: []bson.D{doc("dup2")}, n: 2, dups: 1, exist: []string{"unordered1", "unordered2"},
		cmd: func(c string) bson.D { return insertCmd(c, false, doc("unordered1"), doc("dup2"), doc("unordered2")) }},
	{name: "update", setup: []bson.D{doc("update", "v", 0)}, n: 1, updated: []string{"update"},
		cmd: func(c string) bson.D {
			return updateCmd(c, bson.D{{Key: "q", Value: byID("update")}, {Key: "u", Value: setV1}})
		}},
	{name: "update multi", setup: []bson.D{doc("multi1", "g", "multi", "v", 0), doc("multi2", "g", "multi", "v", 0)}, n: 2,
		updated: []string{"multi1", "multi2"},
		cmd: func(c string) bson.D {
			return updateCmd(c, bson.D{{Key: "q", Value: bson.D{{Key: "g", Value: "multi"}}}, {Key: "u", Value: setV1}, {Key: "multi", Value: true}})
		}},
	{name: "update upsert", n: 1, updated: []string{"upsert"},
		cmd: func(c string) bson.D {
			return updateCmd(c, bson.D{{Key: "q", Value: byID("upsert")}, {Key: "u", Value: setV1}, {Key: "upsert", Value: true}})
		}},
	{name: "update, two statements", setup: []bson.D{doc("bulk1", "v", 0), doc("bulk2", "v", 0)}, n: 2, updated: []string{"bulk1", "bulk2"},
		cmd: func(c string) bson.D {
			return updateCmd(c, bson.D{{Key: "q", Value: byID("bulk1")}, {Key: "u", Value: setV1}},
				bson.D{{Key: "q", Value: byID("bulk2")}, {Key: "u", Value: setV1}})
		}},
	{name: "delete", setup: []bson.D{doc("delete")}, n: 1, gone: []string{"delete"},
		cmd: func(c string) bson.D {
			return deleteCmd(c, bson.D{{Key: "q", Value: byID("delete")}, {Key: "limit", Value: 1}})
		}},
	{name: "delete many", setup: []bson.D{doc("delmany1", "g", "delmany"), doc("delmany2", "g", "delmany")}, n: 2,
		gone: []string{"delmany1", "delmany2"},
		cmd: func(c string) bson.D {
			return deleteCmd(c, bson.D{{Key: "q", Value: bson.D{{Key: "g", Value: "delmany"}}}, {Key: "limit", Value: 0}})
		}},
	{name: "delete, two statements", setup: []bson.D{doc("delbulk1"), doc("delbulk2")}, n: 2, gone: []string{"delbulk1", "delbulk2"},
		cmd: func(c string) bson.D {
			return deleteCmd(c, bson.D{{Key: "q", Value: byID("delbulk1")}, {Key: "limit", Value: 1}},
				bson.D{{Key: "q", Value: byID("delbulk2")}, {Key: "limit", Value: 1}})
		}},
	{name: "findAndModify", setup: []bson.D{doc("fam", "v", 0)}, nPath: "lastErrorObject.n", n: 1, updated: []string{"fam"},
		cmd: func(c string) bson.D {
			return bson.D{{Key: "findAndModify", Value: c}, {Key: "query", Value: byID("fam")}, {Key: "update", Value: setV1}}
		}},
	{name: "findAndModify remove", setup: []bson.D{doc("famremove")}, nPath: "lastErrorObject.n", n: 1, gone: []string{"famremove"},
		cmd: func(c string) bson.D {
			return bson.D{{Key: "findAndModify", Value: c}, {Key: "query", Value: byID("famremove")}, {Key: "remove", Value: true}}
		}},
	{name: "findAndModify upsert", nPath: "lastErrorObject.n", n: 1, updated: []string{"famupsert"},
		cmd: func(c string) bson.D {
			return bson.D{{Key: "findAndModify", Value: c}, {Key: "query", Value: byID("famupsert")}, {Key: "update", Value: setV1},
				{Key: "upsert", Value: true}, {Key: "new", Value: true}}
		}},
}

// journalingConcerns are the write concerns that wait for the journal on a
// standalone mongod 4.4: j or fsync true-ish, and w: "majority" without
// j: false.
// killAfter names the case each round ends with, the kill following its
// reply: between them every command, and each way it writes, is once the
// write the kill follows.
var journalingConcerns = []struct {
	name      string
	wc        bson.D
	killAfter []string
}{
	{"j_true", bson.D{{Key: "j", Value: true}}, []string{"insert unordered, a duplicate between", "delete"}},
	{"j_1", bson.D{{Key: "w", Value: 1}, {Key: "j", Value: 1}}, []string{"update", "findAndModify upsert"}},
	{"fsync_true", bson.D{{Key: "fsync", Value: true}}, []string{"update multi", "insert"}},
	{"w_majority", bson.D{{Key: "w", Value: "majority"}}, []string{"findAndModify", "delete, two statements"}},
}

// Every write command acknowledged with a journaling write concern has
// reached the journal before its reply: WiredTiger has counted a journal
// sync by the time the reply arrives, and the write's effect survives a
// kill -9 sent as the reply arrives. A round runs every command once, each
// on its own documents, and kills the server right after the last one; the
// next server, on the same dbpath, checks the effects of the rounds
// before. Only the last write before a kill tells whether it waited for
// the journal (the journal sync of a later write makes an earlier one
// durable too): the others are checked by the syncs counted.
func TestJournaledWritesSurviveKill(t *testing.T) {
	for _, wc := range journalingConcerns {
		t.Run(wc.name, func(t *testing.T) {
			t.Parallel()
			dbpath := t.TempDir()
			s := startAt(t, dbpath, durableArgs...)
			for round, name := range wc.killAfter {
				last := slices.IndexFunc(durableCases, func(c durableCase) bool { return c.name == name })
				if last < 0 {
					t.Fatalf("no case %q", name)
				}
				durableRound(t, s, fmt.Sprintf("r%d", round), wc.wc, last)
				s = startAt(t, dbpath, durableArgs...)
				for r := 0; r <= round; r++ {
					checkDurable(t, s, fmt.Sprintf("r%d", r), wc.killAfter[r])
				}
			}
		})
	}
}

// durableRound runs every case with write concern wc in collection coll,
// case last at the end, and kills the server as its reply arrives.
func durableRound(t *testing.T, s *server, coll string, wc bson.D, last int) {
	t.Helper()
	var setup []bson.D
	for _, c := range durableCases {
		setup = append(setup, c.setup...)
	}
	if res := s.run(t, "test", withWriteConcern(insertCmd(coll, true, setup...), bson.D{{Key: "j", Value: true}})); num(res, "n") != int64(len(setup)) {
		t.Fatalf("setup insert: %v", res)
	}
	for i, c := range durableCases {
		if i == last {
			continue
		}
		before := logSyncs(t, s)
		res, err := runWrite(s, withWriteConcern(c.cmd(coll), wc))
		synced := logSyncs(t, s) - before
		checkWriteReply(t, c, res, err, wc)
		if synced < 1 {
			t.Errorf("%s with writeConcern %v: acknowledged without a journal sync", c.name, wc)
		}
	}
	c := durableCases[last]
	res, err := runWrite(s, withWriteConcern(c.cmd(coll), wc))
	noErr(t, s.cmd.Process.Signal(syscall.SIGKILL))
	<-s.done
	checkWriteReply(t, c, res, err, wc)
}

func withWriteConcern(cmd, wc bson.D) bson.D {
	return append(append(bson.D(nil), cmd...), bson.E{Key: "writeConcern", Value: wc})
}

// runWrite runs a write command on database test and returns its reply,
// with the write errors it reports as an error.
func runWrite(s *server, cmd bson.D) (bson.Raw, error) {
	return s.db("test").RunCommand(ctx, cmd).Raw()
}

// checkWriteReply checks that the reply counts what c must have done, and
// reports the duplicate key errors c expects and no other error.
func checkWriteReply(t *testing.T, c durableCase, res bson.Raw, err error, wc bson.D) {
	t.Helper()
	dups := 0
	var we mongo.WriteException
	if errors.As(err, &we) && we.WriteConcernError == nil {
		for _, e := range we.WriteErrors {
			if e.Code != 11000 {
				t.Fatalf("%s with writeConcern %v: write error %v", c.name, wc, e)
			}
			dups++
		}
	} else if err != nil {
		t.Fatalf("%s with writeConcern %v: %v", c.name, wc, err)
	}
	if dups != c.dups {
		t.Errorf("%s with writeConcern %v: %d duplicate key errors, want %d", c.name, wc, dups, c.dups)
	}
	path := c.nPath
	if path == "" {
		path = "n"
	}
	if got := num(toM(t, res), path); got != c.n {
		t.Fatalf("%s with writeConcern %v: %s = %d, want %d: %v", c.name, wc, path, got, c.n, res)
	}
}

// checkDurable checks, after a restart, the effects of every case in coll;
// killedAfter names the case the kill followed.
func checkDurable(t *testing.T, s *server, coll, killedAfter string) {
	t.Helper()
	col := s.db("test").Collection(coll)
	for _, c := range durableCases {
		where := c.name
		if c.name == killedAfter {
			where += " (the kill came right after its reply)"
		}
		for _, id := range c.exist {
			if _, found := findV(t, col, id); !found {
				t.Errorf("%s: %s.%s lost after kill -9", where, coll, id)
			}
		}
		for _, id := range c.updated {
			if v, found := findV(t, col, id); !found || v != 1 {
				t.Errorf("%s: %s.%s after kill -9: found %v, v %d, want v 1", where, coll, id, found, v)
			}
		}
		for _, id := range c.gone {
			if _, found := findV(t, col, id); found {
				t.Errorf("%s: %s.%s is back after kill -9", where, coll, id)
			}
		}
	}
}

// findV returns the field v of the document with _id id (-1 without one)
// and whether there is such a document.
func findV(t *testing.T, col *mongo.Collection, id string) (int64, bool) {
	t.Helper()
	raw, err := col.FindOne(ctx, byID(id)).Raw()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return -1, false
	}
	noErr(t, err)
	return num(toM(t, raw), "v"), true
}

// The kill in TestJournaledWritesSurviveKill comes soon enough to lose a
// write that did not wait for the journal: with w: 1 the last write before
// the kill is lost (a busy machine may delay the kill past the journal's
// own write, so up to three tries), while the j: true write just before
// it is kept.
func TestKillAfterReplyLosesUnjournaledWrite(t *testing.T) {
	t.Parallel()
	const tries = 3
	for try := 1; try <= tries; try++ {
		dbpath := t.TempDir()
		s := startAt(t, dbpath, durableArgs...)
		s.run(t, "test", withWriteConcern(insertCmd("c", true, doc("journaled")), bson.D{{Key: "j", Value: true}}))
		s.run(t, "test", withWriteConcern(insertCmd("c", true, doc("unjournaled")), bson.D{{Key: "w", Value: 1}}))
		noErr(t, s.cmd.Process.Signal(syscall.SIGKILL))
		<-s.done
		s = startAt(t, dbpath, durableArgs...)
		col := s.db("test").Collection("c")
		if _, found := findV(t, col, "journaled"); !found {
			t.Fatalf("try %d: the j: true write was lost", try)
		}
		if _, found := findV(t, col, "unjournaled"); !found {
			t.Logf("try %d: the w: 1 write right before kill -9 was lost", try)
			return
		}
		t.Logf("try %d: the w: 1 write survived kill -9", try)
	}
	t.Errorf("a w: 1 write sent right before kill -9 survived %d times: the kill comes too late to tell a journaled write from one that is not", tries)
}
