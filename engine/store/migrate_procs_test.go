package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// migrateHelperEnv makes the test binary act as a second process that
// opens (and so migrates) a database, then exits.
const migrateHelperEnv = "WTD_TEST_MIGRATE_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(migrateHelperEnv); path != "" {
		st, err := Open(context.Background(), path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := st.CreateRun(context.Background(), exampleRunInfo(time.Unix(1700000000, 0))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := st.Close(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTwoProcessesMigrateOneDatabase: two wtd processes that open a new
// database at the same moment both succeed, and the schema is built once.
func TestTwoProcessesMigrateOneDatabase(t *testing.T) {
	for round := 0; round < 8; round++ {
		path := filepath.Join(t.TempDir(), "wtd.db")
		var cmds []*exec.Cmd
		outs := make([][]byte, 3)
		errs := make(chan error, 3)
		for i := 0; i < 3; i++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), migrateHelperEnv+"="+path)
			cmds = append(cmds, cmd)
		}
		for i, cmd := range cmds {
			go func() {
				out, err := cmd.CombinedOutput()
				outs[i] = out
				errs <- err
			}()
		}
		for range cmds {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a process failed: %v\n%s\n%s\n%s", round, err, outs[0], outs[1], outs[2])
			}
		}
		st, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := st.ListRuns(context.Background(), 0)
		v, verr := schemaVersion(context.Background(), st.r)
		st.Close(context.Background())
		if err != nil || len(runs) != 3 || verr != nil || v != len(migrations) {
			t.Fatalf("round %d: %d runs (%v), schema version %d (%v), want 3 runs and version %d", round, len(runs), err, v, verr, len(migrations))
		}
	}
}
