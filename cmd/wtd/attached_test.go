package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbin"
)

// attachedServer starts a minimongod as a server wtd did not start, with
// one document in t.c, and returns its URI and a client of the test's own.
func attachedServer(t *testing.T) (string, *mongo.Client) {
	t.Helper()
	srv := testbin.StartMinimongod(t, 0)
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Disconnect(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.Database("t").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	return srv.URI, client
}

// indexNames lists the indexes of db.coll, sorted.
func indexNames(t *testing.T, client *mongo.Client, db, coll string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	specs, err := client.Database(db).Collection(coll).Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatalf("listIndexes %s.%s: %v", db, coll, err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

// wtdOut runs wtd with args to the end and returns its output.
func wtdOut(t *testing.T, state string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Wtd(t), args...)
	cmd.Env = append(cmd.Environ(), "WTD_STATE_DIR="+state)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wtd %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

// refusedPlaybook sends, through m:command, commands that would change
// the server, each of which must fail naming what to use instead; the
// commands that read must run; then makes two indexes with m:create_index.
const refusedPlaybook = `
local p = params{ uri = "" }
local m = mongod.connect{ uri = p.uri }
local function refused(name, args, db, hint)
  local ok, e = pcall(m.command, m, name, args, db)
  assert(not ok, name .. " ran on a server wtd did not start")
  e = tostring(e)
  assert(e:find("command " .. name .. ": refused on m1, a server wtd did not start (mongod.connect)", 1, true), e)
  assert(e:find(hint, 1, true), ("%q does not name %q"):format(e, hint))
end
refused("setParameter", { internalQueryExecMaxBlockingSortBytes = 1 }, "admin", "use m:set_parameter(name, value)")
refused("setParameter", { ttlMonitorSleepSecs = 3600 }, "admin", "use m:set_parameter(name, value)")
refused("setParameter", { wiredTigerEngineRuntimeConfig = "eviction_target=60" }, "admin", "use m:reconfigure(config)")
refused("profile", { profile = 2 }, "t", "wtd run --allow-commands")
refused("createIndexes", { createIndexes = "c", indexes = { { key = { a = 1 }, name = "a_1" } } }, "t",
  "use m:create_index{ ns = ..., key = ... }, which is recorded and dropped at the end of the run unless keep = true")
do -- refused on every server, before the attached server's rule
  local ok, e = pcall(m.command, m, "setFreeMonitoring", { action = "enable" }, "admin")
  assert(not ok and tostring(e):find("setFreeMonitoring is refused: free monitoring sends", 1, true), tostring(e))
end
refused("collMod", { collMod = "c" }, "t", "not one of the commands that only read")
refused("replSetInitiate", { replSetInitiate = { _id = "rs0", members = { { _id = 0, host = "127.0.0.1:1" } } } }, "admin", "--allow-commands")
refused("dropDatabase", {}, "t", "the daemon config's allow_commands: true")
refused("aggregate", { aggregate = "c", pipeline = { { ["$out"] = "copy" } }, cursor = {} }, "t", "an aggregate with a $out stage")
refused("shutdown", {}, "admin", "--allow-commands")

assert(m:command{ serverStatus = 1 }.ok == 1, "serverStatus")
assert(m:command("count", { count = "c" }, "t").n == 1, "count")
assert(m:command("profile", { profile = -1 }, "t").ok == 1, "profile -1")
assert(m:command("aggregate", { aggregate = "c", pipeline = { { ["$match"] = { _id = 1 } } }, cursor = {} }, "t").cursor.firstBatch[1]._id == 1, "aggregate")
assert(m:command("getParameter", { ttlMonitorSleepSecs = 1 }).ttlMonitorSleepSecs ~= 3600, "getParameter")

m:create_index{ ns = "t.c", key = "a" }
m:create_index{ ns = "t.c", key = "k", keep = true }
log("indexes made")
m:stop() -- disconnects; the end of the run still drops a_1
`

// TestAttachedServerIsLeftAsItWasFound: on a server wtd did not start,
// m:command refuses what would change it (setParameter, profile 2,
// createIndexes, shutdown, dropDatabase, ...) naming the method to use,
// runs what reads, and an index m:create_index made is dropped at the end
// unless keep = true; wtd show lists the index changes.
func TestAttachedServerIsLeftAsItWasFound(t *testing.T) {
	uri, client := attachedServer(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, refusedPlaybook)
	res := runCLI(t, map[string]string{"WTD_STATE_DIR": state}, "run", "--db", db, "--sample-interval", "0", pb, "-p", "uri="+uri)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	ctx := context.Background()
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("the server is down after the run: %v", err)
	}
	if got := indexNames(t, client, "t", "c"); fmt.Sprint(got) != "[_id_ k_1]" {
		t.Errorf("indexes after the run = %v, want [_id_ k_1]: a_1 dropped, k_1 kept", got)
	}
	if n, err := client.Database("t").Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Errorf("t.c after the run: %d documents (%v), want 1", n, err)
	}
	if colls, _ := client.Database("t").ListCollectionNames(ctx, bson.D{}); fmt.Sprint(colls) != "[c]" {
		t.Errorf("collections of t after the run = %v, want [c]", colls)
	}
	show := wtdOut(t, state, "show", "1", "--db", db)
	for _, want := range []string{"changed:", `m1 index a_1 on t.c {"key":{"a":1},"name":"a_1"}: restored `,
		"created index a_1 on t.c (it is dropped at the end of the run)", "created index k_1 on t.c (keep = true: it stays after the run)", "m1 index k_1 on t.c", ": kept (keep = true)"} {
		if !strings.Contains(show, want) {
			t.Errorf("wtd show lacks %q:\n%s", want, show)
		}
	}
}

// TestAllowCommandsRecordsWhatCannotBePutBack: with --allow-commands a
// command that changes a server wtd did not start runs, is recorded first,
// and wtd show (text and --json) says it cannot be put back.
func TestAllowCommandsRecordsWhatCannotBePutBack(t *testing.T) {
	uri, client := attachedServer(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local p = params{ uri = "" }
local m = mongod.connect{ uri = p.uri }
m:command("createIndexes", { createIndexes = "c", indexes = { { key = { b = 1 }, name = "b_1" } } }, "t")
m:command("dropDatabase", {}, "scratch")
`)
	res := runCLI(t, map[string]string{"WTD_STATE_DIR": state}, "run", "--db", db, "--allow-commands", "--sample-interval", "0", pb, "-p", "uri="+uri)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := indexNames(t, client, "t", "c"); fmt.Sprint(got) != "[_id_ b_1]" {
		t.Errorf("indexes after the run = %v, want [_id_ b_1] (what a command did stays)", got)
	}
	show := wtdOut(t, state, "show", "1", "--db", db)
	for _, want := range []string{
		"m1 not restorable: ran createIndexes on t through m:command (allowed by --allow-commands)",
		"m1 not restorable: ran dropDatabase on scratch through m:command (allowed by --allow-commands)",
		"running createIndexes on t through m:command (allowed by --allow-commands)",
	} {
		if !strings.Contains(show, want) {
			t.Errorf("wtd show lacks %q:\n%s", want, show)
		}
	}
	var doc struct {
		Changes []struct {
			Kind, Target, State, What string
			Restorable                bool
		}
	}
	if err := json.Unmarshal([]byte(wtdOut(t, state, "show", "1", "--db", db, "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Changes) != 2 {
		t.Fatalf("changes = %+v, want 2", doc.Changes)
	}
	for i, target := range []string{"createIndexes", "dropDatabase"} {
		if c := doc.Changes[i]; c.Kind != "command" || c.Target != target || c.State != "irreversible" || c.Restorable || !strings.HasPrefix(c.What, "ran "+target) {
			t.Errorf("change %d = %+v, want command %s, irreversible, not restorable", i, c, target)
		}
	}
}

// TestIndexOfAKilledRunIsDroppedByTheNextCommand: wtd killed (SIGKILL)
// after m:create_index on an attached server: the index stays until the
// next wtd command, which drops it.
func TestIndexOfAKilledRunIsDroppedByTheNextCommand(t *testing.T) {
	uri, client := attachedServer(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, `
local p = params{ uri = "" }
local m = mongod.connect{ uri = p.uri }
m:create_index{ ns = "t.c", key = { {"x", 1}, {"y", -1} }, name = "xy" }
log("index made")
sleep(120)
`)
	cmd, out := startWtd(t, state, "run", "--db", db, "--sample-interval", "0", pb, "-p", "uri="+uri)
	waitFor(t, out, "index made", 60*time.Second)
	if got := indexNames(t, client, "t", "c"); fmt.Sprint(got) != "[_id_ xy]" {
		t.Fatalf("indexes during the run = %v, want [_id_ xy]", got)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if got := indexNames(t, client, "t", "c"); fmt.Sprint(got) != "[_id_ xy]" {
		t.Fatalf("indexes after the kill = %v: the index went with wtd, the test's premise fails", got)
	}
	runs := wtdOut(t, state, "runs", "--db", db)
	if !strings.Contains(runs, "run 1 ended without putting back what it changed") {
		t.Errorf("wtd runs does not say it puts back the killed run's changes:\n%s", runs)
	}
	if got := indexNames(t, client, "t", "c"); fmt.Sprint(got) != "[_id_]" {
		t.Errorf("indexes after the next command = %v, want [_id_]", got)
	}
	if show := wtdOut(t, state, "show", "1", "--db", db); !strings.Contains(show, "m1 index xy on t.c") || !strings.Contains(show, ": restored ") {
		t.Errorf("wtd show does not say the index was dropped:\n%s", show)
	}
}
