package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/mongodconf"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
	"wtd/internal/testsvc"
)

func serviceRun(t *testing.T) (*Run, *store.Store, *testsvc.Service, *Server) {
	t.Helper()
	svc := testsvc.Start(t, testbin.Minimongod(t))
	r, st, _ := startTestRun(t, Config{AllowServices: []string{testsvc.Unit}})
	s, err := r.ServiceServer(context.Background(), ServiceOptions{Unit: testsvc.Unit, Config: svc.Config, URI: svc.URI,
		Manager: svc.Manager, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r, st, svc, s
}

func TestServiceRestartEditsTheConfigAndTheRunPutsItBack(t *testing.T) {
	ctx := context.Background()
	r, st, svc, s := serviceRun(t)
	if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
		t.Fatalf("cache before = %.0f, want %.0f", got, testsvc.GB(0.5))
	}
	cache := 0.25
	if err := s.Restart(ctx, changing(hostctl.Settings{CacheSizeGB: cache, SetParameters: map[string]string{"ttlMonitorSleepSecs": "30"}})); err != nil {
		t.Fatalf("restart: %v\nlog:\n%s", err, svc.Log())
	}
	edited := svc.ConfigNow(t)
	for _, want := range []string{"cacheSizeGB: 0.25", "ttlMonitorSleepSecs: 30", "# where to write logging data.",
		"# the operator's choice", "# loopback only", "logAppend: true", "bindIp: 127.0.0.1", "destination: file"} {
		if !strings.Contains(edited, want) {
			t.Errorf("edited config lacks %q:\n%s", want, edited)
		}
	}
	if got := svc.CacheBytes(t); got != testsvc.GB(0.25) {
		t.Errorf("cache after the restart = %.0f, want %.0f", got, testsvc.GB(0.25))
	}
	if got := svc.Parameter(t, "ttlMonitorSleepSecs"); got != int32(30) && got != int64(30) && got != float64(30) {
		t.Errorf("ttlMonitorSleepSecs after the restart = %v (%T), want 30", got, got)
	}
	if st, err := os.Stat(svc.Config); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("config mode after the edit: %v %v, want 0640", st.Mode(), err)
	}
	saved, err := os.ReadFile(filepath.Join(r.Dir(), s.Name+"-original-mongod.conf"))
	if err != nil || string(saved) != string(svc.Original) {
		t.Errorf("original saved in the run directory: %q, %v", saved, err)
	}
	changes, err := st.Changes(ctx, r.ID)
	if err != nil || len(changes) != 1 || string(changes[0].Original) != string(svc.Original) || changes[0].State != store.ChangePending {
		t.Fatalf("changes recorded before the end: %+v, %v", changes, err)
	}
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	if got := svc.ConfigNow(t); got != string(svc.Original) {
		t.Errorf("config after the run is not the original:\n%s\nwant:\n%s", got, svc.Original)
	}
	if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
		t.Errorf("cache after the run = %.0f, want the original %.0f", got, testsvc.GB(0.5))
	}
	changes, _ = st.Changes(ctx, r.ID)
	if len(changes) != 1 || changes[0].State != store.ChangeRestored {
		t.Errorf("changes after the run: %+v, want one restored", changes)
	}
}

func TestServiceNeedsTheOperatorsPermission(t *testing.T) {
	r, _, _ := startTestRun(t, Config{})
	_, err := r.ServiceServer(context.Background(), ServiceOptions{Unit: "mongod", Config: "/etc/mongod.conf", URI: "mongodb://127.0.0.1:1"})
	if !errors.Is(err, ErrServiceNotAllowed) || !strings.Contains(err.Error(), "--allow-service mongod") {
		t.Errorf("err = %v, want ErrServiceNotAllowed naming --allow-service", err)
	}
}

func TestRuntimeParametersOfAnAttachedServerArePutBack(t *testing.T) {
	ctx := context.Background()
	client, uri := startTestServer(t)
	r, st, _ := startTestRun(t, Config{})
	s, err := r.ConnectServer(ctx, uri, 0)
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) any {
		v, err := s.GetParameter(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ttlBefore, slowBefore := get("ttlMonitorSleepSecs"), get("ttlMonitorEnabled")
	if _, err := s.SetParameter(ctx, "ttlMonitorSleepSecs", int32(7)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetParameter(ctx, "ttlMonitorSleepSecs", int32(9)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetParameterKeep(ctx, "ttlMonitorEnabled", !slowBefore.(bool), true); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconfigure(ctx, "eviction_target=60,eviction_trigger=90"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconfigure(ctx, "no_such_key=1"); err == nil || !strings.Contains(err.Error(), "keep = true") {
		t.Errorf("a reconfigure wtd cannot put back: %v", err)
	}
	if err := r.Finish(ctx, record.StatusFailed, "test"); err != nil {
		t.Fatal(err)
	}
	_ = client
	s2, err := func() (*Server, error) {
		r2, _, _ := startTestRun(t, Config{})
		return r2.ConnectServer(ctx, uri, 0)
	}()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s2.GetParameter(ctx, "ttlMonitorSleepSecs"); v != ttlBefore {
		t.Errorf("ttlMonitorSleepSecs after the run = %v (%T), want %v (%T)", v, v, ttlBefore, ttlBefore)
	}
	if v, _ := s2.GetParameter(ctx, "ttlMonitorEnabled"); v == slowBefore {
		t.Errorf("ttlMonitorEnabled changed with keep = true was put back")
	}
	if v, _ := s2.GetParameter(ctx, "wiredTigerEngineRuntimeConfig"); v != "eviction_target=80,eviction_trigger=95" {
		t.Errorf("wiredTigerEngineRuntimeConfig after the run = %v, want the defaults set back", v)
	}
	changes, _ := st.Changes(ctx, r.ID)
	states := map[string]int{}
	for _, c := range changes {
		states[c.State]++
	}
	if states[store.ChangeRestored] != 3 || states[store.ChangeKept] != 1 || states[store.ChangePending] != 0 {
		t.Errorf("change states = %v, want 3 restored and 1 kept", states)
	}
}

// TestRestoreUnrestoredPutsBackAKilledRunsParameter: a run whose wtd died
// (its owner pid is gone) with a runtime change pending is put back by
// RestoreUnrestored, as every wtd command and the daemon at start call it,
// unless it is to be skipped.
func TestRestoreUnrestoredPutsBackAKilledRunsParameter(t *testing.T) {
	ctx := context.Background()
	client, uri := startTestServer(t)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	id, deadPID := deadOwnersRun(ctx, t, st)
	before, _ := record.EncodeValue(int32(60))
	change, _ := record.EncodeValue(int32(5))
	if _, err := st.AddChange(ctx, store.Change{RunID: id, Server: "m1", Kind: store.ChangeParameter, Target: "ttlMonitorSleepSecs",
		Before: before, Change: change, Restore: `{"uri":"` + uri + `"}`}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: int32(5)}}).Err(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	// Skipped (wtd restore RUN restores RUN itself), its changes are left
	// as they are; it is recorded aborted all the same.
	if err := RestoreUnrestored(ctx, st, "a test", &log, id); err != nil || strings.Contains(log.String(), "putting it back") ||
		!strings.Contains(log.String(), fmt.Sprintf("run %d recorded aborted: wtd (pid %d) ended without recording its end", id, deadPID)) {
		t.Fatalf("skipping run %d: %v\n%s", id, err, log.String())
	}
	if ids, _ := st.UnrestoredRuns(ctx); len(ids) != 1 || ids[0] != id {
		t.Errorf("unrestored after skipping run %d: %v", id, ids)
	}
	if err := RestoreUnrestored(ctx, st, "a test", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var got bson.M
	raw, _ := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "ttlMonitorSleepSecs", Value: 1}}).Raw()
	bson.Unmarshal(raw, &got)
	if fmt.Sprint(got["ttlMonitorSleepSecs"]) != "60" {
		t.Errorf("ttlMonitorSleepSecs after the restore = %v, want 60\n%s", got["ttlMonitorSleepSecs"], log.String())
	}
	if !strings.Contains(log.String(), "ended without putting back") {
		t.Errorf("the restore does not say what it does:\n%s", log.String())
	}
	changes, _ := st.Changes(ctx, id)
	if len(changes) != 1 || changes[0].State != store.ChangeRestored {
		t.Errorf("changes = %+v", changes)
	}
	if ids, _ := st.UnrestoredRuns(ctx); len(ids) != 0 {
		t.Errorf("still unrestored: %v", ids)
	}
}

// TestRestoreUnrestoredRestartsAServiceLeftDown: wtd killed while its
// service was down with a config it cannot start with; the next wtd puts
// the original config back and starts it through the manager.
func TestRestoreUnrestoredRestartsAServiceLeftDown(t *testing.T) {
	ctx := context.Background()
	svc := testsvc.Start(t, testbin.Minimongod(t))
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	id, _ := deadOwnersRun(ctx, t, st)
	owner, _ := mongodconf.StatOwner(svc.Config)
	info, _ := json.Marshal(restoreInfo{URI: svc.URI, Unit: testsvc.Unit, Manager: svc.Manager, TimeoutS: 60, File: &owner})
	if _, err := st.AddChange(ctx, store.Change{RunID: id, Server: "m1", Kind: store.ChangeConfig, Target: svc.Config,
		Original: svc.Original, Change: `[]`, Restore: string(info)}); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(svc.Original), "cacheSizeGB: 0.5", "cacheSizeGB: 0.5\n      configString: no_such_wiredtiger_key=1", 1)
	if err := os.WriteFile(svc.Config, []byte(bad), 0o640); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(svc.Manager[0], svc.Manager[1], "restart", testsvc.Unit).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	time.Sleep(2 * time.Second)
	if _, err := svc.Status(); err == nil {
		t.Fatal("the service answers with the bad config: the test's premise fails")
	}
	var log strings.Builder
	if err := RestoreUnrestored(ctx, st, "a test", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if got := svc.ConfigNow(t); got != string(svc.Original) {
		t.Errorf("config after the restore:\n%s", got)
	}
	if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
		t.Errorf("cache after the restore = %.0f", got)
	}
	if changes, _ := st.Changes(ctx, id); len(changes) != 1 || changes[0].State != store.ChangeRestored {
		t.Errorf("changes = %+v", changes)
	}
}
