package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// With no daemon at --api, wtd schedules shows the --config file's
// schedules, read from the file (not an empty config).
func TestSchedulesWithoutADaemon(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pb.lua"), []byte("log('x')\n"), 0o644)
	cfg := fmt.Sprintf("listen: 127.0.0.1:%d\ndb: wtd.db\nschedules:\n  - name: nightly\n    cron: \"0 3 * * *\"\n    playbook: pb.lua\n",
		testbin.FreePort(t))
	path := filepath.Join(dir, "wtd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("http://127.0.0.1:%d", testbin.FreePort(t))
	for _, args := range [][]string{{"schedules", "--config", path}, {"schedules", "--api", api, "--config", path}} {
		r := runCLI(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "nightly") || !strings.Contains(r.stdout, "0 3 * * *") ||
			!strings.Contains(r.stderr, "showing the config alone") {
			t.Errorf("wtd %s: %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// With the config's results database holding the schedule's history,
	// the history is shown although the daemon is down.
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: filepath.Join(dir, "pb.lua"), Playbook: "log('x')\n", Trigger: "schedule nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, store.StatusOK, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"fire", "skip"} {
		if _, err := st.AddScheduleEvent(ctx, store.ScheduleEvent{TS: time.Now(), Kind: store.KindSchedule, Name: "nightly", Event: ev, RunID: id}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close(ctx)
	r := runCLI(t, nil, "schedules", "--config", path, "--json")
	var reply struct {
		Schedules []struct {
			Name    string
			Skips   int64
			LastRun *struct {
				ID     int64
				Status string
			} `json:"last_run"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &reply); err != nil {
		t.Fatalf("%v\n%s%s", err, r.stdout, r.stderr)
	}
	if len(reply.Schedules) != 1 || reply.Schedules[0].LastRun == nil || reply.Schedules[0].LastRun.ID != id || reply.Schedules[0].Skips != 1 ||
		!strings.Contains(r.stderr, "showing the config and the history in the results database") {
		t.Errorf("wtd schedules --config with a history, daemon down: %+v\n%s", reply, r.stderr)
	}
}
