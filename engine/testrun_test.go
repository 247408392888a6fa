package engine

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testhost"
)

// startTestRun starts a run with cfg on a fresh store in a temp dir; the
// store, host, run directory and log are filled in when cfg leaves them
// empty. The run is finished (aborted) when the test ends.
func startTestRun(t testing.TB, cfg Config) (*Run, *store.Store, *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	log := &bytes.Buffer{}
	cfg.Store, cfg.Log = st, log
	if cfg.Host == nil {
		cfg.Host = testhost.New(t)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	r, err := StartRun(ctx, cfg, RunInfo{PlaybookPath: "test.lua", Playbook: "-- test", Params: map[string]any{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Finish(context.Background(), record.StatusAborted, "test cleanup") })
	return r, st, log
}
