package hostctl

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Version asks the running server for its version (buildInfo.version).
func (s *Server) Version(ctx context.Context) (string, error) {
	var reply struct {
		Version string `bson:"version"`
	}
	err := s.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&reply)
	if err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	if reply.Version == "" {
		return "", fmt.Errorf("read server version: buildInfo has no version")
	}
	return reply.Version, nil
}

// BinaryVersion runs "<path> --version" and returns the version of its
// "db version v4.4.6" line, e.g. "4.4.6".
func BinaryVersion(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w; output: %q", path, err, firstLines(string(out), 5))
	}
	v, ok := parseDBVersion(string(out))
	if !ok {
		return "", fmt.Errorf("read version of %s: no \"db version\" line in %q", path, firstLines(string(out), 5))
	}
	return v, nil
}

// parseDBVersion finds "db version vX.Y.Z" in mongod --version output.
func parseDBVersion(out string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		_, rest, ok := strings.Cut(sc.Text(), "db version ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		return strings.TrimPrefix(f[0], "v"), true
	}
	return "", false
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
