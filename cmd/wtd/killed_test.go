package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
)

// recorded reads a run's row and its steps straight from the database
// file, as sqlite3 shows them: the run's status and reason, each step as
// "name status error", and how many sample rows it has.
func recorded(t *testing.T, db string, id int64) (status, reason string, steps []string, samples int) {
	t.Helper()
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRow("SELECT status, reason FROM runs WHERE id = ?", id).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query("SELECT name, status, error FROM steps WHERE run_id = ? ORDER BY seq", id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, st, e string
		if err := rows.Scan(&name, &st, &e); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, strings.TrimSpace(name+" "+st+" "+e))
	}
	if err := conn.QueryRow("SELECT count(*) FROM samples WHERE run_id = ?", id).Scan(&samples); err != nil {
		t.Fatal(err)
	}
	return status, reason, steps, samples
}

// ttlMonitorSleepSecs reads that parameter of the server at uri.
func ttlMonitorSleepSecs(t *testing.T, uri string, set any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(uri + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	admin := c.Database("admin")
	if set != nil {
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: set}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var out bson.M
	raw, err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	bson.Unmarshal(raw, &out)
	return fmt.Sprint(out["ttlMonitorSleepSecs"])
}

// TestRunOfAPidThatLivesAgainIsRecordedAborted: a run whose recorded
// owner pid belongs to a live process (pid 1, which lives for ever) but
// whose experiment lock nobody holds is not going on: the next command
// records it aborted in the database, with the reason, ends its step and
// puts back what it changed; wtd restore and wtd rm then work on it.
func TestRunOfAPidThatLivesAgainIsRecordedAborted(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	lock, err := hostctl.TryLock(hostctl.LockPath(state), hostctl.LockHolder{})
	if err != nil {
		t.Fatal(err)
	}
	lock.Release() // the lock file is there, and free
	db := filepath.Join(t.TempDir(), "wtd.db")
	srv := testbin.StartMinimongod(t, 0)
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "p.lua", Playbook: "--", OwnerPID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateStep(ctx, store.StepInfo{RunID: id, Name: "hold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddChange(ctx, store.Change{RunID: id, Server: "m1", Kind: store.ChangeParameter, Target: "ttlMonitorSleepSecs",
		Before: `{"v":{"$numberInt":"60"}}`, Change: `{"v":{"$numberInt":"5"}}`, Restore: `{"uri":"` + srv.URI + `"}`}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ttlMonitorSleepSecs(t, srv.URI, int32(5)); got != "5" {
		t.Fatalf("ttlMonitorSleepSecs = %s after setting 5", got)
	}

	env := map[string]string{"WTD_STATE_DIR": state}
	res := runCLI(t, env, "runs", "--db", db)
	status, reason, steps, _ := recorded(t, db, id)
	want := "wtd (pid 1) ended without recording its end: killed or crashed (its experiment lock " + hostctl.LockPath(state) + " is free); found by wtd runs at "
	if res.code != 0 || status != store.StatusAborted || !strings.HasPrefix(reason, want) {
		t.Fatalf("after wtd runs (exit %d) the database says %s %q, want aborted %q...\nstdout:\n%s\nstderr:\n%s", res.code, status, reason, want, res.stdout, res.stderr)
	}
	if len(steps) != 1 || steps[0] != "hold aborted "+reason {
		t.Errorf("steps recorded: %q, want the hold step aborted with the run's reason", steps)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("run %d recorded aborted: %s", id, reason)) || !strings.Contains(res.stdout, "aborted") {
		t.Errorf("wtd runs does not say so:\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	}
	if got := ttlMonitorSleepSecs(t, srv.URI, nil); got != "60" {
		t.Errorf("ttlMonitorSleepSecs = %s after wtd runs, want 60 put back\n%s", got, res.stderr)
	}
	if res := runCLI(t, env, "restore", "--db", db, strconv.FormatInt(id, 10)); res.code != 0 ||
		!strings.Contains(res.stdout, "m1 setParameter ttlMonitorSleepSecs=5 (was 60): restored ") {
		t.Errorf("wtd restore: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, env, "rm", "--db", db, strconv.FormatInt(id, 10)); res.code != 0 || res.stdout != fmt.Sprintf("deleted run %d\n", id) {
		t.Errorf("wtd rm: exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}

// holdPlaybook loads a little, then holds its second step for a minute.
const holdPlaybook = `
local m = mongod.start{}
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = 2000, doc_bytes = 500 } end }
step{ name = "hold", run = function() sleep(60) end }
`

// TestKilledRunIsRecordedAborted: while wtd run goes on (it holds its
// experiment lock) other commands leave it running and refuse to restore
// or delete it; once wtd is killed (SIGKILL: nothing of it can record its
// end), the next command records the run aborted with the reason, ends its
// running step, keeps its samples, and wtd rm works.
func TestKilledRunIsRecordedAborted(t *testing.T) {
	_, mm := binaries(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	cmd, out := startWtd(t, state, "run", "--db", db, "--mongod", mm, "--sample-interval", "100ms", writePlaybook(t, holdPlaybook))
	waitFor(t, out, "hold started", 60*time.Second)
	env := map[string]string{"WTD_STATE_DIR": state}

	res := runCLI(t, env, "runs", "--db", db)
	if status, reason, _, _ := recorded(t, db, 1); res.code != 0 || status != store.StatusRunning || reason != "" || !strings.Contains(res.stdout, "running") {
		t.Errorf("a run going on after wtd runs (exit %d): %s %q\n%s%s", res.code, status, reason, res.stdout, res.stderr)
	}
	if res := runCLI(t, env, "restore", "--db", db, "1"); res.code != 2 || !strings.Contains(res.stderr, "run 1 is still going on") {
		t.Errorf("wtd restore of a run going on: exit %d\n%s", res.code, res.stderr)
	}
	if res := runCLI(t, env, "rm", "--db", db, "1"); res.code != 2 || !strings.Contains(res.stderr, "still running") {
		t.Errorf("wtd rm of a run going on: exit %d\n%s", res.code, res.stderr)
	}
	if status, _, _, _ := recorded(t, db, 1); status != store.StatusRunning {
		t.Fatalf("a run going on is recorded %s", status)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	_, _, _, samples := recorded(t, db, 1)
	res = runCLI(t, env, "show", "--db", db, "1")
	status, reason, steps, after := recorded(t, db, 1)
	want := fmt.Sprintf("wtd (pid %d) ended without recording its end: killed or crashed (", cmd.Process.Pid)
	if status != store.StatusAborted || !strings.HasPrefix(reason, want) || !strings.Contains(reason, "; found by wtd show at ") {
		t.Fatalf("after the kill and wtd show the database says %s %q, want aborted %q...; found by wtd show at ...\n%s%s", status, reason, want, res.stdout, res.stderr)
	}
	if len(steps) != 2 || steps[0] != "load ok" || steps[1] != "hold aborted "+reason {
		t.Errorf("steps recorded: %q, want load ok and hold aborted with the run's reason", steps)
	}
	if samples == 0 || after != samples {
		t.Errorf("samples: %d before wtd show, %d after; want some, all kept", samples, after)
	}
	if res.code != 0 || !strings.Contains(res.stdout, "run 1  aborted") || !strings.Contains(res.stdout, reason) {
		t.Errorf("wtd show: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := runCLI(t, env, "rm", "--db", db, "1"); res.code != 0 {
		t.Errorf("wtd rm of the killed run: exit %d\n%s", res.code, res.stderr)
	}
}

// TestKilledRunInAPIDNamespace: wtd run as pid 1 of its own pid namespace
// (as in a container) records pid 1, which outside is another process that
// lives for ever. While it runs, a command outside leaves it running; once
// it is killed, the next command outside records it aborted.
func TestKilledRunInAPIDNamespace(t *testing.T) {
	_, mm := binaries(t)
	state := t.TempDir()
	db := filepath.Join(t.TempDir(), "wtd.db")
	args := []string{"--fork", "--pid", "--mount-proc"}
	if os.Geteuid() != 0 {
		args = append([]string{"--map-root-user"}, args...)
	}
	args = append(args, testbin.Wtd(t), "run", "--db", db, "--mongod", mm, "--sample-interval", "100ms", writePlaybook(t, holdPlaybook))
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+state)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), "hold started") {
		select {
		case <-exited:
			if strings.Contains(out.String(), "Operation not permitted") {
				t.Skipf("unshare may not make a pid namespace here (EPERM):\n%s", out.String())
			}
			t.Fatalf("unshare %v exited before the run held:\n%s", args, out.String())
		case <-time.After(30 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"hold started\" within 60 s:\n%s", out.String())
		}
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	if err != nil || len(strings.Fields(string(children))) != 1 {
		t.Fatalf("the process unshare started: %q %v", children, err)
	}
	inner, _ := strconv.Atoi(strings.Fields(string(children))[0])
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow("SELECT owner_pid FROM runs WHERE id = 1").Scan(&pid); err != nil || pid != 1 {
		t.Fatalf("recorded owner pid %d (%v), want 1", pid, err)
	}
	var ns string
	err = conn.QueryRow("SELECT owner_pid_ns FROM runs WHERE id = 1").Scan(&ns)
	conn.Close()
	if self, _ := os.Readlink("/proc/self/ns/pid"); err != nil || ns == "" || ns == self {
		t.Errorf("recorded owner pid namespace %q (%v), want another than %s", ns, err, self)
	}

	env := map[string]string{"WTD_STATE_DIR": state}
	res := runCLI(t, env, "runs", "--db", db)
	if status, reason, _, _ := recorded(t, db, 1); status != store.StatusRunning {
		t.Errorf("the run going on in its pid namespace is recorded %s %q after wtd runs outside\n%s", status, reason, res.stderr)
	}
	syscall.Kill(inner, syscall.SIGKILL) // pid 1 of the namespace: all of it ends
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("unshare did not end within 30 s of its child's kill")
	}
	res = runCLI(t, env, "runs", "--db", db)
	status, reason, steps, samples := recorded(t, db, 1)
	want := "wtd (pid 1) ended without recording its end: killed or crashed ("
	if status != store.StatusAborted || !strings.HasPrefix(reason, want) || !strings.Contains(reason, "; found by wtd runs at ") {
		t.Fatalf("after the kill and wtd runs outside the database says %s %q, want aborted %q...\n%s%s", status, reason, want, res.stdout, res.stderr)
	}
	if len(steps) != 2 || steps[1] != "hold aborted "+reason || samples == 0 {
		t.Errorf("steps recorded: %q, samples %d; want hold aborted with the run's reason, and samples", steps, samples)
	}
	t.Logf("recorded: %s", reason)
}
