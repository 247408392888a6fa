package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryRunArgumentTakesLatest: each command that takes RUN takes
// "latest" and "latest:PLAYBOOK" through the one resolver, as it takes a
// run id.
func TestEveryRunArgumentTakesLatest(t *testing.T) {
	pb := writePlaybook(t, `
local f = io.open("kept.txt", "w")
f:write("kept")
f:close()
sleep(0.3)
`)
	db := filepath.Join(t.TempDir(), "wtd.db")
	for i := 0; i < 2; i++ {
		if res := runCLI(t, nil, "run", "--db", db, "--sample-interval", "100ms", pb); res.code != 0 {
			t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
	}
	for _, ref := range []string{"latest", "latest:pb"} {
		for _, tc := range []struct {
			args []string
			want string // in stdout or stderr
		}{
			{[]string{"show", ref}, "run 2  ok"},
			{[]string{"samples", ref, "--source", "host"}, "cpu.user"},
			{[]string{"artifacts", ref, "-o", "DIR"}, "kept.txt"},
			{[]string{"compare", "1", ref}, "run 2 ("},
			{[]string{"compare", "--baseline", ref}, "run 2 ("},
			{[]string{"report", ref, "-o", "DIR/report.html"}, "wrote DIR/report.html"},
			{[]string{"restore", ref}, "run 2 changed nothing"},
			{[]string{"rm", ref}, "deleted run 2"},
		} {
			dir := t.TempDir()
			args := []string{"--db", copyDB(t, db)}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "DIR", dir))
			}
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			res := runCLI(t, nil, args...)
			if res.code != 0 || !strings.Contains(res.stdout+res.stderr, want) {
				t.Errorf("wtd %s: exit %d, want 0 and %q\n%s%s", strings.Join(tc.args, " "), res.code, want, res.stdout, res.stderr)
			}
		}
	}
	dir := t.TempDir()
	if res := runCLI(t, nil, "artifacts", "--db", db, "latest", "-o", dir); res.code != 0 {
		t.Fatalf("artifacts latest: exit %d\n%s", res.code, res.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "kept.txt")); err != nil || string(b) != "kept" {
		t.Errorf("artifacts latest wrote %q, %v", b, err)
	}
	if res := runCLI(t, nil, "artifacts", "--db", db, "first"); res.code != 2 || !strings.Contains(res.stderr, `run "first": want a run id, latest or latest:PLAYBOOK`) {
		t.Errorf("artifacts first: exit %d\n%s", res.code, res.stderr)
	}
}
