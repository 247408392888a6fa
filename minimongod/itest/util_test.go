package itest

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

type mongoIndexModel = mongo.IndexModel

// logBuffer collects a server's output: written by the goroutine that
// copies the process's output, read by the test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLog waits up to 10 s for a line of the server's log holding every
// one of parts: the log reaches the test through a pipe, a little after
// the server wrote it.
func (s *server) waitLog(parts ...string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if containsLine(s.log.String(), parts...) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// containsLine reports whether some line of log contains every one of parts.
func containsLine(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// writeErrCode runs a write command on database test and returns the code
// of its first write error, or of the command error; 0 when it succeeded.
func writeErrCode(t *testing.T, s *server, cmd bson.D) int32 {
	t.Helper()
	err := s.db("test").RunCommand(ctx, cmd).Err()
	if err == nil {
		return 0
	}
	var we mongo.WriteException
	if errors.As(err, &we) && len(we.WriteErrors) > 0 {
		return int32(we.WriteErrors[0].Code)
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.Code
	}
	t.Fatalf("%v: %v", cmd[0], err)
	return 0
}

// must returns v for a test to check, failing the test at once when err is
// not nil: must(c.CountDocuments(ctx, filter))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// noErr fails the test at once when err is not nil.
func noErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
