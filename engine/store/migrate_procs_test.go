package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// migrateHelperEnv makes the test binary act as a second process that
// opens (and so migrates) a database, then exits.
const migrateHelperEnv = "WTD_TEST_MIGRATE_DB"

func TestMain(m *testing.M) {
	if path := os.Getenv(migrateHelperEnv); path != "" {
		// Start together: every helper opens at the same instant.
		if at, err := strconv.ParseInt(os.Getenv(migrateHelperEnv+"_AT"), 10, 64); err == nil {
			time.Sleep(time.Until(time.Unix(0, at)))
		}
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
	for round := 0; round < 20; round++ {
		path := filepath.Join(t.TempDir(), "wtd.db")
		var cmds []*exec.Cmd
		outs := make([][]byte, 4)
		errs := make(chan error, 4)
		at := strconv.FormatInt(time.Now().Add(150*time.Millisecond).UnixNano(), 10)
		for i := 0; i < 4; i++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), migrateHelperEnv+"="+path, migrateHelperEnv+"_AT="+at)
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
				t.Fatalf("round %d: a process failed: %v\n%s\n%s\n%s\n%s", round, err, outs[0], outs[1], outs[2], outs[3])
			}
		}
		st, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := st.ListRuns(context.Background(), 0)
		v, verr := schemaVersion(context.Background(), st.r)
		st.Close(context.Background())
		if err != nil || len(runs) != 4 || verr != nil || v != len(migrations) {
			t.Fatalf("round %d: %d runs (%v), schema version %d (%v), want 4 runs and version %d", round, len(runs), err, v, verr, len(migrations))
		}
	}
}
