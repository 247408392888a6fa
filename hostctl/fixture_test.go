package hostctl

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// fixtureHost is the read-only fixture tree under testdata/.
func fixtureHost() *Host {
	return &Host{ProcRoot: "testdata/proc", SysRoot: "testdata/sys"}
}

// copyFixture copies testdata/ into a temp dir so a test can change files,
// and returns a Host rooted there.
func copyFixture(t *testing.T) *Host {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
	return &Host{ProcRoot: filepath.Join(dst, "proc"), SysRoot: filepath.Join(dst, "sys")}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
