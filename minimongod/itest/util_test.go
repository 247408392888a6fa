package itest

import (
	"testing"

	"errors"
	"go.mongodb.org/mongo-driver/v2/bson"
	"strings"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

type mongoIndexModel = mongo.IndexModel

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
