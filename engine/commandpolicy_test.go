package engine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
)

func attachedRun(t *testing.T, cfg Config) (*Run, *store.Store, *Server, *mongo.Client, string) {
	t.Helper()
	client, uri := startTestServer(t)
	r, st, _ := startTestRun(t, cfg)
	s, err := r.ConnectServer(context.Background(), uri, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r, st, s, client, uri
}

// TestPlaybookCommandOnAnAttachedServer: commands that change the server
// are refused, naming the method to use and the operator's flag, and
// never reach it; commands that read run; a server wtd started takes any.
func TestPlaybookCommandOnAnAttachedServer(t *testing.T) {
	ctx := context.Background()
	r, st, s, client, _ := attachedRun(t, Config{})
	if _, err := client.Database("t").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  bson.D
		db   string
		want string
	}{
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 3600}}, "admin", "use m:set_parameter(name, value)"},
		{bson.D{{Key: "setParameter", Value: 1}, {Key: "wiredTigerEngineRuntimeConfig", Value: "eviction_target=60"}}, "admin", "use m:reconfigure(config)"},
		{bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}, "t",
			"use m:create_index{ ns = ..., key = ... }, which is recorded and dropped at the end of the run unless keep = true"},
		{bson.D{{Key: "profile", Value: int32(2)}}, "t", "wtd run --allow-commands"},
		{bson.D{{Key: "dropDatabase", Value: 1}}, "t", "the daemon config's allow_commands: true"},
		{bson.D{{Key: "shutdown", Value: 1}}, "admin", "a server wtd did not start (mongod.connect)"},
	} {
		_, err := s.PlaybookCommand(ctx, tc.db, tc.cmd)
		if !errors.Is(err, ErrCommandRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCommandRefused naming %q", tc.cmd[0].Key, err, tc.want)
		}
	}
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("the server is down after the refused shutdown: %v", err)
	}
	if n, err := client.Database("t").Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("t.c after the refused dropDatabase: %d documents, %v", n, err)
	}
	specs, _ := client.Database("t").Collection("c").Indexes().ListSpecifications(ctx)
	if len(specs) != 1 {
		t.Errorf("indexes after the refused createIndexes: %+v", specs)
	}
	v, _ := s.GetParameter(ctx, "ttlMonitorSleepSecs")
	if v == int32(3600) || v == int64(3600) {
		t.Errorf("ttlMonitorSleepSecs = %v after the refused setParameter", v)
	}
	for _, cmd := range []bson.D{
		{{Key: "serverStatus", Value: 1}},
		{{Key: "count", Value: "c"}},
		{{Key: "profile", Value: int32(-1)}},
		{{Key: "listIndexes", Value: "c"}},
	} {
		if _, err := s.PlaybookCommand(ctx, "t", cmd); err != nil {
			t.Errorf("%s: %v", cmd[0].Key, err)
		}
	}
	if changes, _ := st.Changes(ctx, r.ID); len(changes) != 0 {
		t.Errorf("changes recorded for refused and read-only commands: %+v", changes)
	}
}

// TestAllowedCommandsAreRecordedAsIrreversible: with the operator's leave
// a command that changes an attached server runs, recorded first as a
// change that cannot be put back, and the end of the run leaves it.
func TestAllowedCommandsAreRecordedAsIrreversible(t *testing.T) {
	ctx := context.Background()
	r, st, s, client, _ := attachedRun(t, Config{AllowCommands: true})
	ix := bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1"}}}
	if _, err := s.PlaybookCommand(ctx, "t", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: ix}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlaybookCommand(ctx, "t", bson.D{{Key: "noSuchCommand", Value: 1}}); err == nil {
		t.Error("noSuchCommand: no error")
	}
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	specs, _ := client.Database("t").Collection("c").Indexes().ListSpecifications(ctx)
	if len(specs) != 2 {
		t.Errorf("indexes after the run: %+v, want _id and a_1 (a command is not put back)", specs)
	}
	changes, _ := st.Changes(ctx, r.ID)
	if len(changes) != 2 {
		t.Fatalf("changes = %+v, want 2", changes)
	}
	c := changes[0]
	if c.Kind != store.ChangeCommand || c.Target != "createIndexes" || c.State != store.ChangeIrreversible || !c.RestoredAt.IsZero() {
		t.Errorf("change = %+v", c)
	}
	if got := record.ChangeWhat(c); got != "ran createIndexes on t through m:command (allowed by --allow-commands)" {
		t.Errorf("ChangeWhat = %q", got)
	}
	var cc record.CommandChange
	if err := json.Unmarshal([]byte(c.Change), &cc); err != nil || !strings.Contains(cc.Command, `"createIndexes":"c"`) {
		t.Errorf("change column = %s (%v)", c.Change, err)
	}
	if f := changes[1]; f.Target != "noSuchCommand" || f.State != store.ChangeIrreversible || !strings.Contains(f.Detail, "the server answered with an error") {
		t.Errorf("failed command's change = %+v", f)
	}
	if ids, _ := st.UnrestoredRuns(ctx); len(ids) != 0 {
		t.Errorf("runs to put back: %v, want none (a command cannot be)", ids)
	}
}

// TestCreateIndexOnAnAttachedServerIsDroppedAtTheEnd: an index the run
// creates is recorded before and dropped at the end (a collection it
// created with it too, when empty), one with keep = true stays, and one
// that existed before is no change.
func TestCreateIndexOnAnAttachedServerIsDroppedAtTheEnd(t *testing.T) {
	ctx := context.Background()
	r, st, s, client, _ := attachedRun(t, Config{})
	coll := client.Database("t").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "old", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	one := func(f string) []IndexKey { return []IndexKey{{Field: f, Dir: 1}} }
	for _, spec := range []IndexSpec{
		{NS: "t.c", Keys: one("a")},
		{NS: "t.c", Keys: one("old")},
		{NS: "t.c", Keys: one("k"), Keep: true},
		{NS: "t.fresh", Keys: one("b")},
	} {
		if _, err := s.CreateIndex(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	changes, _ := st.Changes(ctx, r.ID)
	if len(changes) != 3 || changes[0].State != store.ChangePending || changes[1].State != store.ChangeKept {
		t.Fatalf("changes before the end = %+v, want a_1 pending, k_1 kept, b_1 pending", changes)
	}
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	specs, _ := coll.Indexes().ListSpecifications(ctx)
	for _, sp := range specs {
		names[sp.Name] = true
	}
	if !names["_id_"] || !names["old_1"] || !names["k_1"] || names["a_1"] || len(names) != 3 {
		t.Errorf("indexes of t.c after the run: %v, want _id_, old_1 and k_1", names)
	}
	if colls, _ := client.Database("t").ListCollectionNames(ctx, bson.D{}); len(colls) != 1 || colls[0] != "c" {
		t.Errorf("collections after the run: %v, want only c (fresh was created by the index and is empty)", colls)
	}
	changes, _ = st.Changes(ctx, r.ID)
	if changes[0].State != store.ChangeRestored || changes[2].State != store.ChangeRestored || changes[1].State != store.ChangeKept {
		t.Errorf("changes after the end = %+v", changes)
	}
	if got := record.ChangeWhat(changes[2]); !strings.Contains(got, "index b_1 on t.fresh") || !strings.Contains(got, "it created the collection") {
		t.Errorf("ChangeWhat = %q", got)
	}
}

// TestRestoreUnrestoredDropsAKilledRunsIndex: an index recorded by a run
// whose wtd died is dropped by the next wtd that opens the database.
func TestRestoreUnrestoredDropsAKilledRunsIndex(t *testing.T) {
	ctx := context.Background()
	client, uri := startTestServer(t)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	id, _ := deadOwnersRun(ctx, t, st)
	coll := client.Database("t").Collection("c")
	coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	change, _ := json.Marshal(record.IndexChange{Name: "a_1", Spec: `{"key":{"a":1},"name":"a_1"}`})
	if _, err := st.AddChange(ctx, store.Change{RunID: id, Server: "m1", Kind: store.ChangeIndex, Target: "t.c",
		Change: string(change), Restore: `{"uri":"` + uri + `"}`}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := RestoreUnrestored(ctx, st, "a test", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	specs, _ := coll.Indexes().ListSpecifications(ctx)
	if len(specs) != 1 {
		t.Errorf("indexes after the restore: %+v, want only _id\n%s", specs, log.String())
	}
	if !strings.Contains(log.String(), "dropped index a_1 on t.c") {
		t.Errorf("the restore does not say what it did:\n%s", log.String())
	}
	// Again: the index is gone, which is no failure.
	st.SetChangeState(ctx, []int64{1}, store.ChangePending, "")
	if err := RestoreRun(ctx, st, id, &log); err != nil {
		t.Fatalf("restore of a dropped index: %v", err)
	}
	if changes, _ := st.Changes(ctx, id); len(changes) != 1 || changes[0].State != store.ChangeRestored || !strings.Contains(changes[0].Detail, "was not there any more") {
		t.Errorf("changes = %+v", changes)
	}
}

// TestPlaybookCommandOnAStartedServer: a server wtd started takes any
// command, unrecorded (it is stopped at the end of the run).
func TestPlaybookCommandOnAStartedServer(t *testing.T) {
	ctx := context.Background()
	r, st, _ := startTestRun(t, Config{MongodBinary: startTestServerBinary(t)})
	s, err := r.StartServer(ctx, ServerOptions{Settings: hostctl.Settings{CacheSizeGB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	ix := bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: int32(1)}}}, {Key: "name", Value: "a_1"}}}
	if _, err := s.PlaybookCommand(ctx, "t", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: ix}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlaybookCommand(ctx, "t", bson.D{{Key: "dropDatabase", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if changes, _ := st.Changes(ctx, r.ID); len(changes) != 0 {
		t.Errorf("changes recorded on a server wtd started: %+v", changes)
	}
}
