package hostctl

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolvePath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(root, "run")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{run, outside, filepath.Join(outside, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustLink := func(target, link string) {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(filepath.Join(outside, "sub"), filepath.Join(run, "abs"))
	mustLink("../outside/sub", filepath.Join(run, "rel"))
	mustLink(filepath.Join(root, "nowhere"), filepath.Join(run, "dangling"))
	mustLink("loop2", filepath.Join(run, "loop1"))
	mustLink("loop1", filepath.Join(run, "loop2"))

	tests := []struct{ base, path, want string }{
		{run, "db", filepath.Join(run, "db")},
		{run, filepath.Join(run, "a", "b"), filepath.Join(run, "a", "b")},
		{run, "../outside/x", filepath.Join(outside, "x")},
		{run, "abs/db", filepath.Join(outside, "sub", "db")},
		{run, "rel/db", filepath.Join(outside, "sub", "db")},
		// ".." after a link goes to the parent of the link's target, as
		// the kernel does, not back into the run directory.
		{run, "abs/../db", filepath.Join(outside, "db")},
		{run, "dangling/db", filepath.Join(root, "nowhere", "db")},
		{run, "new/../abs/db", filepath.Join(outside, "sub", "db")},
		{run, "new/./x/../y", filepath.Join(run, "new", "y")},
	}
	for _, tt := range tests {
		got, err := ResolvePath(tt.base, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("ResolvePath(%s, %s) = %q, %v; want %q", tt.base, tt.path, got, err, tt.want)
		}
	}
	if _, err := ResolvePath(run, "loop1/db"); err == nil {
		t.Error("ResolvePath through a loop of links succeeded")
	}
}

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		path, root string
		want       bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/a/..b", "/a", true},
		{"/x/y", "/", true},
	} {
		if got := Within(tt.path, tt.root); got != tt.want {
			t.Errorf("Within(%s, %s) = %v, want %v", tt.path, tt.root, got, tt.want)
		}
	}
}
