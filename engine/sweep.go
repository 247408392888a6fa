package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"wtd/engine/workload"
)

// DefaultServer returns the server a step describes when it names none:
// the only one running, else nil.
func (r *Run) DefaultServer() *Server { return r.defaultServer() }

// SweepOptions say how SweepThreads runs.
type SweepOptions struct {
	Threads []int
	// Duration bounds each thread count's run (0: the spec's bounds).
	Duration time.Duration
	// Step names the steps (default "threads"); Labels are added to each,
	// beside threads = N.
	Step   string
	Labels map[string]any
	// Progress, if set, gives the progress callback of each run.
	Progress func(threads int) func(done, total int64)
}

// Check checks the thread counts as SweepThreads does.
func (opt SweepOptions) Check() error {
	if len(opt.Threads) == 0 {
		return errors.New("sweep threads: no thread counts")
	}
	for _, n := range opt.Threads {
		if n < 1 || n > workload.MaxThreads {
			return fmt.Errorf("sweep threads: threads %d out of range [1, %d]", n, workload.MaxThreads)
		}
	}
	return nil
}

// StepName is the name of the sweep's steps: Step, else "threads".
func (opt SweepOptions) StepName() string {
	if opt.Step == "" {
		return "threads"
	}
	return opt.Step
}

// SweepThreads runs spec on s once per thread count, each as its own
// recorded step labelled threads = N, and returns the table and its knee.
// Inserts go on from one run's last _id to the next. A failing step ends the
// sweep with its error and the points so far.
func (r *Run) SweepThreads(ctx context.Context, s *Server, spec workload.Spec, opt SweepOptions) (workload.SweepResult, error) {
	if err := opt.Check(); err != nil {
		return workload.SweepResult{}, err
	}
	if opt.Duration > 0 {
		spec.Duration = opt.Duration
	}
	name := opt.StepName()
	var res workload.SweepResult
	for _, n := range opt.Threads {
		labels := map[string]any{}
		for k, v := range opt.Labels {
			labels[k] = v
		}
		labels["threads"] = n
		spec.Threads = n
		var progress func(done, total int64)
		if opt.Progress != nil {
			progress = opt.Progress(n)
		}
		rec, err := r.Step(ctx, StepSpec{Name: name, Labels: labels, Server: s, NS: spec.NS}, func(ctx context.Context) (any, error) {
			return s.Workload(ctx, spec, progress)
		})
		wr, _ := rec.Result.(workload.Result)
		if err != nil {
			return res, fmt.Errorf("sweep threads: %d threads: %w", n, err)
		}
		res.Points = append(res.Points, workload.SweepPoint{Threads: n, OpsPerSec: wr.Total.OpsPerSec, P50Micros: wr.Total.P50Micros, P99Micros: wr.Total.P99Micros})
		if wr.NextInsertID > 0 {
			spec.InsertStartID = wr.NextInsertID
		}
	}
	knee, ok, reason, err := workload.Knee(res.Points)
	if err != nil {
		return res, fmt.Errorf("sweep threads: %w", err)
	}
	if ok {
		res.Knee = &knee
	}
	res.Reason = reason
	r.Eventf("info", "sweep", "threads %v: %s", opt.Threads, reason)
	return res, nil
}
