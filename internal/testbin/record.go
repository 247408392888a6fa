package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RecordRuns runs playbook (Lua text) with wtd on minimongod once per
// entry of params (each a list of "name=value"), into a new results
// database in dir (with the state directory), and returns the database's
// path. Runs get ids 1, 2, ... in order.
func RecordRuns(t testing.TB, dir, playbook string, params ...[]string) string {
	t.Helper()
	wtd, mm := Wtd(t), Minimongod(t)
	db, pb := filepath.Join(dir, "wtd.db"), filepath.Join(dir, "playbook.lua")
	if err := os.WriteFile(pb, []byte(playbook), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ps := range params {
		args := []string{"run", "--db", db, "--mongod", mm, "--sample-interval", "250ms", pb}
		for _, p := range ps {
			args = append(args, "-p", p)
		}
		cmd := exec.Command(wtd, args...)
		cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+filepath.Join(dir, "state"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("wtd %v: %v\n%s", args, err, out)
		}
	}
	return db
}
