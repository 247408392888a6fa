package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testhost"
)

// TestResultsDatabaseFull: when the results database stops taking writes,
// the run says so at once, stops cleanly (servers shut down) and ends
// failed with the true reason, not "aborted" with a wrong one.
func TestResultsDatabaseFull(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "wtd.db")
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	var errs lockedBuffer
	r, err := StartRun(ctx, Config{Store: st, Host: testhost.New(t), MongodBinary: startTestServerBinary(t),
		SampleInterval: 20 * time.Millisecond, Dir: t.TempDir(), Log: &bytes.Buffer{}, Errors: &errs},
		RunInfo{PlaybookPath: "full.lua", Playbook: "-- full"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.StartServer(r.Context(), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	fi, _ := os.Stat(dbPath)
	if err := st.LimitSize(ctx, fi.Size()+64<<10); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, stepErr := r.Step(r.Context(), StepSpec{Name: "wait"}, func(ctx context.Context) (any, error) {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(60 * time.Second):
			return nil, errors.New("the run went on for 60 s with a full database")
		}
	})
	if time.Since(start) > 30*time.Second {
		t.Errorf("the run noticed the full database after %s", time.Since(start))
	}
	if stepErr == nil || !errors.Is(r.StoreErr(), ErrResultsDatabase) {
		t.Fatalf("step error %v, store error %v", stepErr, r.StoreErr())
	}
	if !strings.Contains(errs.String(), "results database: ") || !strings.Contains(errs.String(), "full") {
		t.Errorf("nothing said at once on the error output: %q", errs.String())
	}
	r.Finish(ctx, record.StatusAborted, "would be the wrong reason")
	if processAlive(pid) {
		t.Errorf("server %d still running", pid)
	}
	// Read back with a connection that has no size limit.
	st2, err := store.OpenExisting(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close(ctx)
	run, err := st2.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != record.StatusFailed || !strings.HasPrefix(run.Reason, "results database: ") {
		t.Errorf("run recorded %s: %s", run.Status, run.Reason)
	}
}
