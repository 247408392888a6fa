package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
)

// TestStepSettingsOfOldRecordsRead: a step recorded before the knobs took
// their options' names (cache_size_gb, engine_config; sync_delay as the
// server spec once wrote it) reads back from a results database with its
// settings, and a new record writes the options' names only.
func TestStepSettingsOfOldRecordsRead(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	runID, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "p.lua", Playbook: "-- p", StartedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	records := map[string]string{
		"old": `{"cache_size_gb":0.25,"cache_max_bytes":268435456,"engine_config":"eviction_target=60","syncdelay":30,` +
			`"argv":["mongod","--syncdelay","30"],"parameters":{"syncdelay":30}}`,
		"older spec": `{"cache_size_gb":0.25,"engine_config":"eviction_target=60","sync_delay":30,"cache_max_bytes":268435456}`,
		"new":        `{"cacheSizeGB":0.25,"engineConfig":"eviction_target=60","syncdelay":30,"cache_max_bytes":268435456}`,
	}
	for name, rec := range records {
		if _, err := st.CreateStep(ctx, store.StepInfo{RunID: runID, Name: name, StartedAt: time.Now(), Settings: json.RawMessage(rec)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	steps, err := st.Steps(ctx, runID)
	if err != nil || len(steps) != len(records) {
		t.Fatalf("steps = %d, %v; want %d", len(steps), err, len(records))
	}
	for _, s := range steps {
		got := record.StepFromStore(s).Settings
		if got == nil || got.CacheSizeGB != 0.25 || got.EngineConfig != "eviction_target=60" || got.SyncDelay != 30 || got.CacheMaxBytes != 268435456 {
			t.Errorf("step %q: settings read back %+v from %s", s.Name, got, s.Settings)
			continue
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"cacheSizeGB":0.25`, `"engineConfig":"eviction_target=60"`, `"syncdelay":30`, `"cache_max_bytes":268435456`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("step %q: settings written again %s lack %s", s.Name, b, want)
			}
		}
		for _, old := range []string{"cache_size_gb", "engine_config", "sync_delay"} {
			if strings.Contains(string(b), old) {
				t.Errorf("step %q: settings written again %s hold the old name %s", s.Name, b, old)
			}
		}
	}
	var bad record.Settings
	if err := json.Unmarshal([]byte(`{"cacheSizeGB":"big"}`), &bad); err == nil {
		t.Error("settings with a cacheSizeGB that is not a number decoded")
	}
}
