package itest

import (
	"errors"
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
