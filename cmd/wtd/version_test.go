package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionNamesTheCommit: the binary built from a checkout says which
// commit it is, and every run records it.
func TestVersionNamesTheCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("this test needs the git checkout it was built from: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	wtd, _ := binaries(t)
	out, err := exec.Command(wtd, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "wtd "+Version+" commit "+commit+" (committed ") {
		t.Errorf("wtd version = %q, want the commit %s and its time", out, commit)
	}
	db := filepath.Join(t.TempDir(), "wtd.db")
	cmd, buf := startWtd(t, t.TempDir(), "run", "--db", db, writePlaybook(t, "log('x')\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	ctx := context.Background()
	st := openDB(t, db)
	r, err := st.GetRun(ctx, 1)
	if err != nil || !strings.Contains(r.WtdVersion, "commit "+commit) {
		t.Errorf("run records wtd %q (%v), want commit %s", r.WtdVersion, err, commit)
	}
}
