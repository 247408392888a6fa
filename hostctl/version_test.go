package hostctl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDBVersion(t *testing.T) {
	tests := []struct {
		out, want string
		ok        bool
	}{
		{"db version v4.4.6\nBuild Info: {\n    \"version\": \"4.4.6\"\n}\n", "4.4.6", true},
		{"db version v4.2.24\ngit version: abc\n", "4.2.24", true},
		{"some banner\ndb version v7.0.2-rc1\n", "7.0.2-rc1", true},
		{"mongos version v4.4.6\n", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := parseDBVersion(tt.out)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseDBVersion(%q) = %q, %v; want %q, %v", tt.out, got, ok, tt.want, tt.ok)
		}
	}
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBinaryVersion(t *testing.T) {
	dir := t.TempDir()
	good := script(t, dir, "mongod", "echo 'db version v4.4.6'\necho 'Build Info: {}'\n")
	v, err := BinaryVersion(context.Background(), good)
	if err != nil || v != "4.4.6" {
		t.Fatalf("BinaryVersion = %q, %v; want 4.4.6", v, err)
	}
	odd := script(t, dir, "odd", "echo 'hello'\n")
	if _, err := BinaryVersion(context.Background(), odd); err == nil || !strings.Contains(err.Error(), `no "db version" line`) {
		t.Errorf("err = %v, want no \"db version\" line", err)
	}
	failing := script(t, dir, "failing", "echo 'boom' >&2\nexit 4\n")
	if _, err := BinaryVersion(context.Background(), failing); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v, want one quoting the output", err)
	}
}
