package daemon

import (
	"context"
	"time"

	"wtd/compare"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/schedule"
)

// verdictTimeout bounds judging one run against its baseline.
const verdictTimeout = 30 * time.Second

// verdict is the run-end hook that judges a run that ended ok by its place
// among the earlier ok runs of the same playbook with the same parameters
// (compare.VerdictInHistory; against the previous one while there are
// fewer than three) and returns the verdict, which the
// scheduler records with the run's end. Runs that did not end ok are not
// judged.
func (d *daemon) verdict(ctx context.Context, end schedule.RunEnd) map[string]any {
	if end.Status != store.StatusOK {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, verdictTimeout)
	defer cancel()
	v, err := compare.VerdictInHistory(ctx, d.st, end.RunID, compare.Options{})
	if err != nil {
		d.opts.Log.Error("regression verdict", "schedule", end.Schedule, "run", end.RunID, "error", err)
		return map[string]any{"verdict_error": err.Error()}
	}
	d.opts.Log.Info("regression verdict", "schedule", end.Schedule, "run", end.RunID, "baseline", v.Baseline, "history", v.History,
		"verdict", v.Verdict, "slower", v.Slower, "faster", v.Faster)
	return map[string]any{record.VerdictAttr: v}
}
