package itest

import (
	"context"
	"crypto/rand"
	"os/exec"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// When the journal hits ENOSPC WiredTiger panics; minimongod then logs the
// fatal error with its cause and exits non-zero, as mongod does, instead
// of staying up and failing every read and write. The data directory is a
// small tmpfs mounted in a private mount namespace (unshare).
func TestDiskFullIsFatal(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	dbpath := t.TempDir()
	mountAndRun := []string{"unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=48m tmpfs " + dbpath + " && exec"}
	s := startWrapped(t, dbpath, mountAndRun, "--wiredTigerCacheSizeGB", "0.25")
	c := s.db("test").Collection("c")
	big := make([]byte, 1<<20) // random, so that snappy cannot shrink it
	// Inserts end when the server does, instead of waiting for it to come
	// back (the client's server selection timeout).
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ictx.Done():
		}
	}()
	var lastErr error
	for i := 0; i < 200; i++ { // 200 MiB: far more than the filesystem holds
		select {
		case <-s.done:
			i = 200
			continue
		default:
		}
		rand.Read(big)
		_, lastErr = c.InsertOne(ictx, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: big}})
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("minimongod still running after the disk filled (last insert error: %v)\n%s", lastErr, tail(s.log.String(), 4000))
	}
	if code := s.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 after a WiredTiger panic")
	}
	log := s.log.String()
	if !containsLine(log, `"s":"F"`, "No space left on device") {
		t.Errorf("no fatal log line naming the cause:\n%s", tail(log, 4000))
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
