package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowDirPlaybook starts a server on the dbpath -p dbpath= names.
const allowDirPlaybook = `
local p = params{ dbpath = "" }
local m = mongod.start{ dbpath = p.dbpath, cacheSizeGB = 0.25 }
assert(m:command{ ping = 1 }.ok == 1)
m:stop()
`

func TestAllowDirLetsADBPathOutsideTheRunDirectory(t *testing.T) {
	t.Parallel()
	_, mm := binaries(t)
	pb := writePlaybook(t, allowDirPlaybook)
	allowed := t.TempDir()
	dbpath := filepath.Join(allowed, "db")

	res := runCLI(t, nil, "run", "--db", filepath.Join(t.TempDir(), "wtd.db"), "--mongod", mm, "--sample-interval", "0",
		pb, "-p", "dbpath="+dbpath)
	if res.code != exitFailed {
		t.Fatalf("without --allow-dir: exit %d, want %d\nstderr:\n%s", res.code, exitFailed, res.stderr)
	}
	for _, want := range []string{"dbpath " + dbpath + " is outside the run directory", "no directory is allowed with wtd run --allow-dir"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}
	if _, err := os.Stat(dbpath); !os.IsNotExist(err) {
		t.Fatalf("the refused dbpath exists: %v", err)
	}

	res = runCLI(t, nil, "run", "--db", filepath.Join(t.TempDir(), "wtd.db"), "--mongod", mm, "--sample-interval", "0",
		"--allow-dir", t.TempDir(), "--allow-dir", allowed, pb, "-p", "dbpath="+dbpath)
	if res.code != exitOK {
		t.Fatalf("with --allow-dir: exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(dbpath, "WiredTiger")); err != nil {
		t.Errorf("the server did not use the allowed dbpath: %v", err)
	}
}

func TestAllowDirMustBeADirectory(t *testing.T) {
	pb := writePlaybook(t, allowDirPlaybook)
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		filepath.Join(t.TempDir(), "missing"): "no such file or directory",
		file:                                  "not a directory",
	} {
		db := filepath.Join(t.TempDir(), "wtd.db")
		res := runCLI(t, nil, "run", "--db", db, "--allow-dir", dir, pb)
		if res.code != exitUsage || !strings.Contains(res.stderr, "--allow-dir "+dir) || !strings.Contains(res.stderr, want) {
			t.Errorf("--allow-dir %s: exit %d, stderr %q; want exit %d naming the directory and %q", dir, res.code, res.stderr, exitUsage, want)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("--allow-dir %s: a usage error created the results database", dir)
		}
	}
}
