package itest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

type mongoIndexModel = mongo.IndexModel

// serverLog is a server's standard output and error: a file the process
// writes itself (no pipe, no copying goroutine), read whole by String.
type serverLog struct{ f *os.File }

// newServerLog creates the log file in a temporary directory of t.
func newServerLog(t testing.TB) *serverLog {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "minimongod.out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return &serverLog{f: f}
}

func (l *serverLog) String() string {
	b, err := os.ReadFile(l.f.Name())
	if err != nil {
		return fmt.Sprintf("(cannot read the server's output: %v)", err)
	}
	return string(b)
}

// waitLog waits up to 10 s for a line of the server's log holding every
// one of parts, for lines the server may write a little after what the
// test saw.
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
