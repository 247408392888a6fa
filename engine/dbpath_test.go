package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/hostctl"
)

// newCheckRun starts a run whose servers never start: its binary does not
// exist, so only the checks before a start run.
func newCheckRun(t *testing.T, allow ...string) *Run {
	t.Helper()
	r, _, _ := startTestRun(t, Config{MongodBinary: "/nonexistent/mongod", AllowDirs: allow})
	return r
}

func resolved(t *testing.T, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStartServerRefusesDBPathOutsideTheRun(t *testing.T) {
	outside := resolved(t, t.TempDir())
	allowed := resolved(t, t.TempDir())
	r := newCheckRun(t, allowed)
	runDir := resolved(t, r.Dir())
	if err := os.Symlink(outside, filepath.Join(r.Dir(), "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(allowed, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ dbpath, want string }{
		{filepath.Join(outside, "db"), "dbpath " + filepath.Join(outside, "db") + " is outside the run directory " + runDir},
		{"../db", "(resolved: " + filepath.Join(filepath.Dir(runDir), "db") + ")"},
		{"link/db", "dbpath link/db (resolved: " + filepath.Join(outside, "db") + ")"},
		{filepath.Join(allowed, "escape", "db"), "(resolved: " + filepath.Join(outside, "db") + ")"},
		{filepath.Join(runDir, "x", "..", "..", "db"), "is outside the run directory"},
	} {
		_, err := r.StartServer(context.Background(), ServerOptions{DBPath: tt.dbpath})
		if err == nil {
			t.Fatalf("StartServer(dbpath %s) succeeded", tt.dbpath)
		}
		for _, want := range []string{tt.want, "the directories allowed with wtd run --allow-dir: " + allowed, "wtd run --allow-dir DIR"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("dbpath %s: error %q lacks %q", tt.dbpath, err, want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "db")); !os.IsNotExist(err) {
		t.Errorf("a refused dbpath was created: %v", err)
	}
	_, err := newCheckRun(t).StartServer(context.Background(), ServerOptions{DBPath: filepath.Join(outside, "db")})
	if err == nil || !strings.Contains(err.Error(), "no directory is allowed with wtd run --allow-dir") {
		t.Errorf("without --allow-dir: %v", err)
	}
}

func TestCheckDBPathAllowsTheRunAndAllowedDirectories(t *testing.T) {
	allowed := resolved(t, t.TempDir())
	r := newCheckRun(t, allowed)
	runDir := resolved(t, r.Dir())
	for dbpath, want := range map[string]string{
		"db":                                  filepath.Join(runDir, "db"),
		"a/../b/db":                           filepath.Join(runDir, "b", "db"),
		filepath.Join(runDir, "db"):           filepath.Join(runDir, "db"),
		allowed:                               allowed,
		filepath.Join(allowed, "x", "db"):     filepath.Join(allowed, "x", "db"),
		filepath.Join(allowed, "..", "other"): "",
	} {
		got, err := r.checkDBPath(dbpath)
		if want == "" {
			if err == nil {
				t.Errorf("checkDBPath(%s) = %s, want an error", dbpath, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("checkDBPath(%s) = %q, %v; want %q", dbpath, got, err, want)
		}
	}
}

func TestStartServerRefusesPathArgsWithoutQuotingTheFile(t *testing.T) {
	r := newCheckRun(t)
	secret := filepath.Join(t.TempDir(), "secret.conf")
	if err := os.WriteFile(secret, []byte("SECRET-FIRST-LINE: 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-f", secret}, {"--config=" + secret}, {"--logpath", secret}, {"--keyFile", secret}} {
		_, err := r.StartServer(context.Background(), ServerOptions{Settings: hostctl.Settings{ExtraArgs: args}})
		if err == nil || !strings.Contains(err.Error(), "is refused") {
			t.Fatalf("StartServer(args %q) = %v, want a refusal", args, err)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("the error quotes the file: %v", err)
		}
	}
	data, _ := os.ReadFile(secret)
	if string(data) != "SECRET-FIRST-LINE: 42\n" {
		t.Errorf("the file changed: %q", data)
	}
}
