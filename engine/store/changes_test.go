package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestChangesOfADatabaseBeforeIndexAndCommandKinds: a database made before
// the index and command kinds keeps its changes when opened, and then
// takes changes of those kinds, a command as irreversible: no run with
// only such a change is one to put back, and its record has no restore
// time.
func TestChangesOfADatabaseBeforeIndexAndCommandKinds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, migrations[:5]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO runs (id, playbook_path, playbook, playbook_sha256, started_at, ended_at, status, owner_pid, owner_host)
		VALUES (1, 'a.lua', '--', 'x', 1, 2, 'ok', 1, 'h')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO changes (run_id, server, kind, target, before, change, keep, state, made_at, restored_at)
		VALUES (1, 'm1', 'parameter', 'ttlMonitorSleepSecs', '{"v":60}', '{"v":5}', 0, 'restored', 10, 20)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO changes (run_id, server, kind, target, change, keep, state, made_at) VALUES (1, 'm1', 'command', 'shutdown', '{}', 0, 'irreversible', 30)`); err == nil {
		t.Fatal("the old schema took a command change: the test's premise fails")
	}
	db.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	old, err := s.Changes(ctx, 1)
	if err != nil || len(old) != 1 || old[0].Target != "ttlMonitorSleepSecs" || old[0].State != ChangeRestored ||
		old[0].Before != `{"v":60}` || old[0].RestoredAt.UnixNano() != 20 {
		t.Fatalf("changes after the migration = %+v, %v", old, err)
	}
	id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "b.lua", Playbook: "--"})
	if err != nil {
		t.Fatal(err)
	}
	s.FinishRun(ctx, id, StatusOK, "", time.Now())
	cmd, err := s.AddChange(ctx, Change{RunID: id, Server: "m1", Kind: ChangeCommand, Target: "dropDatabase", Change: `{}`, State: ChangeIrreversible})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddChange(ctx, Change{RunID: id, Server: "m1", Kind: ChangeIndex, Target: "t.c", Change: `{"name":"a_1"}`, Keep: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetChangeState(ctx, []int64{cmd}, ChangeIrreversible, "the server answered with an error"); err != nil {
		t.Fatal(err)
	}
	changes, _ := s.Changes(ctx, id)
	if len(changes) != 2 || changes[0].State != ChangeIrreversible || !changes[0].RestoredAt.IsZero() ||
		changes[0].Detail != "the server answered with an error" || changes[1].Kind != ChangeIndex || changes[1].State != ChangeKept {
		t.Errorf("changes = %+v", changes)
	}
	if ids, err := s.UnrestoredRuns(ctx); err != nil || len(ids) != 0 {
		t.Errorf("runs to put back = %v, %v; want none", ids, err)
	}
}
