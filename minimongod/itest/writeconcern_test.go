package itest

import (
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// logSyncs returns WiredTiger's count of journal fsyncs.
func logSyncs(t *testing.T, s *server) int64 {
	t.Helper()
	return num(s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}}), "wiredTiger.log.log sync operations")
}

// waitJournalFlushed waits until the journal flusher has flushed, with a
// sync, everything committed before the call: until it counted two log
// flushes more (the first may have begun before the call).
func waitJournalFlushed(t *testing.T, s *server) {
	t.Helper()
	flushes := func() int64 {
		return num(s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}}), "wiredTiger.log.log flush operations")
	}
	before := flushes()
	if before < 0 {
		t.Fatal("serverStatus has no wiredTiger.log.log flush operations")
	}
	deadline := time.Now().Add(10 * time.Second)
	for flushes() < before+2 {
		if time.Now().After(deadline) {
			t.Fatalf("the journal flusher did not flush twice within 10s (log flush operations %d)", before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A writeConcern j given as a number is true-ish as in mongod: the write
// waits for the journal (it used to be acknowledged without), and
// survives kill -9. A malformed writeConcern is refused and writes nothing.
func TestWriteConcernJAsNumberWaitsForJournal(t *testing.T) {
	dbpath := t.TempDir()
	s := startAt(t, dbpath, "--setParameter", "journalCommitInterval=500", "--syncdelay", "3600")
	insert := func(id int, wc any) bson.D {
		return bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: id}}}}, {Key: "writeConcern", Value: wc}}
	}
	bad := []struct {
		wc   any
		code int32
	}{
		{"x", 9},
		{bson.D{{Key: "j", Value: "abc"}}, 9},
		{bson.D{{Key: "j", Value: true}, {Key: "fsync", Value: true}}, 9},
		{bson.D{{Key: "w", Value: -1}}, 9},
		{bson.D{{Key: "w", Value: bson.A{}}}, 9},
		{bson.D{{Key: "nonsense", Value: 1}}, 9},
		{bson.D{{Key: "w", Value: 2}}, 2},
		{bson.D{{Key: "w", Value: "dc1"}}, 2},
	}
	for i, tc := range bad {
		if code := writeErrCode(t, s, insert(1000+i, tc.wc)); code != tc.code {
			t.Errorf("writeConcern %v: code %d, want %d", tc.wc, code, tc.code)
		}
	}
	before := logSyncs(t, s)
	const n = 40
	for i := 0; i < n; i++ {
		s.run(t, "test", insert(i, bson.D{{Key: "w", Value: 1}, {Key: "j", Value: 1}}))
	}
	if synced := logSyncs(t, s) - before; synced < n {
		t.Errorf("%d writes with j: 1 caused %d journal syncs, want one each", n, synced)
	}
	noErr(t, s.cmd.Process.Signal(syscall.SIGKILL))
	<-s.done
	s2 := startAt(t, dbpath)
	got, err := s2.db("test").Collection("c").CountDocuments(ctx, bson.D{})
	if err != nil || got != n {
		t.Fatalf("after kill -9: %d documents (%v), want %d and none of the refused ones", got, err, n)
	}
}
