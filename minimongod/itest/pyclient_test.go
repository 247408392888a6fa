package itest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pythonWithPymongo is Debian's python3, which python3-pymongo installs
// into.
const pythonWithPymongo = "/usr/bin/python3"

// runPymongo runs script with pymongo connected to s as the variable db
// (database "test") and returns what it prints. The package
// python3-pymongo is a test dependency: without it the test fails.
func runPymongo(t *testing.T, s *server, script string) string {
	t.Helper()
	if out, err := exec.Command(pythonWithPymongo, "-c", "import pymongo").CombinedOutput(); err != nil {
		t.Fatalf("pymongo is needed (apt-get install -y python3-pymongo): %v\n%s", err, out)
	}
	prelude := "import pymongo, sys\n" +
		"client = pymongo.MongoClient('127.0.0.1', " + strconv.Itoa(s.port) + ", serverSelectionTimeoutMS=5000)\n" +
		"db = client.test\n"
	path := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(path, []byte(prelude+script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pythonWithPymongo, path).CombinedOutput()
	if err != nil {
		t.Fatalf("pymongo script: %v\n%s\nserver log:\n%s", err, out, s.log.String())
	}
	return strings.TrimSpace(string(out))
}
