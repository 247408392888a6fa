package compare

import (
	"context"
	"path/filepath"
	"testing"

	"wtd/engine/store"
	"wtd/internal/testbin"
)

// ratePlaybook reads at the open-loop rate $WTD_TEST_RATE gives, so that
// runs of one playbook text with the same parameters differ by a known
// amount.
const ratePlaybook = `
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "t.c", docs = 1000, doc_bytes = 200 }
step{ name = "reads", run = function()
  return m:workload{ ns = "t.c", duration = 4, threads = 2, mix = { read = 1 }, rate = tonumber(os.getenv("WTD_TEST_RATE")) }
end }
`

// TestVerdictInHistoryOfRealRuns: four real runs at 300 reads a second,
// then one at 150: among the runs before it, the reads of a run at the
// same rate are no difference, and those of the slow one slower (about
// -50%), against the four before it.
func TestVerdictInHistoryOfRealRuns(t *testing.T) {
	dir := t.TempDir()
	var db string
	for _, rate := range []string{"300", "300", "300", "300", "150"} {
		t.Setenv("WTD_TEST_RATE", rate)
		db = testbin.RecordRuns(t, dir, ratePlaybook, nil)
	}
	ctx := context.Background()
	st, err := store.OpenExisting(ctx, filepath.Join(dir, "wtd.db"))
	if err != nil || db != filepath.Join(dir, "wtd.db") {
		t.Fatal(err, db)
	}
	defer st.Close(ctx)
	for _, c := range []struct {
		run     int64
		verdict string
		history int
	}{{4, NoDifference, 3}, {5, Slower, 4}} {
		v, err := VerdictInHistory(ctx, st, c.run, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The reads step's verdict (the load of 1,000 documents, a few
		// milliseconds, is noise either way).
		got := NoDifference
		var reads *VerdictStep
		for i, s := range v.Steps {
			if s.Step == "reads" {
				got, reads = s.Verdict, &v.Steps[i]
			}
		}
		if got != c.verdict || len(v.History) != c.history {
			t.Errorf("run %d: reads %s over %v (%s; %+v), want %s over %d runs", c.run, got, v.History, v.Method, v.Steps, c.verdict, c.history)
		}
		if c.verdict == Slower && (reads == nil || reads.ChangePct == nil || *reads.ChangePct > -40 || *reads.ChangePct < -60) {
			t.Errorf("run %d's reads: %+v, want about -50%%", c.run, reads)
		}
	}
}
