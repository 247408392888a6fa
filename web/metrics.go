package web

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"wtd/engine/store"
)

// collector reads the daemon's metrics at each scrape: counts from the
// results database (they survive restarts) and the scheduler's state.
type collector struct {
	st    *store.Store
	sched Scheduler
	log   *slog.Logger

	runs, skips, transitions, failures, lastOK, inProgress, windowOpen, windowFailing, thresholds *prometheus.Desc
}

func newCollector(st *store.Store, sched Scheduler, log *slog.Logger) *collector {
	return &collector{st: st, sched: sched, log: log,
		runs:          prometheus.NewDesc("wtd_runs", "Runs in the results database by status.", []string{"status"}, nil),
		skips:         prometheus.NewDesc("wtd_schedule_skips_total", "Fires of a schedule skipped because a run was going.", []string{"schedule"}, nil),
		transitions:   prometheus.NewDesc("wtd_window_transitions_total", "Window transitions applied, by window and event (open, close).", []string{"window", "event"}, nil),
		failures:      prometheus.NewDesc("wtd_window_transition_failures_total", "Window transitions that failed (each attempt), by window and event.", []string{"window", "event"}, nil),
		lastOK:        prometheus.NewDesc("wtd_schedule_last_success_timestamp_seconds", "When a run of the schedule last ended ok (unix time).", []string{"schedule"}, nil),
		inProgress:    prometheus.NewDesc("wtd_run_in_progress", "1 while the daemon carries out a run.", nil, nil),
		windowOpen:    prometheus.NewDesc("wtd_window_open", "1 while the window's open settings are in force on its server.", []string{"window"}, nil),
		windowFailing: prometheus.NewDesc("wtd_window_failing", "1 while the window's last transition failed (it is being retried).", []string{"window"}, nil),
		thresholds: prometheus.NewDesc("wtd_schedule_last_run_thresholds", "Thresholds of the schedule's last ended run, by state (passed, failed, no baseline).",
			[]string{"schedule", "state"}, nil),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runs, c.skips, c.transitions, c.failures, c.lastOK, c.inProgress, c.windowOpen, c.windowFailing, c.thresholds} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if counts, err := c.st.RunCounts(ctx); err == nil {
		for _, status := range []string{store.StatusRunning, store.StatusOK, store.StatusFailed, store.StatusAborted} {
			ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(counts[status]), status)
		}
	} else {
		c.log.Error("metrics: count runs", "error", err)
	}
	c.counts(ctx, ch, c.skips, store.KindSchedule, "skip", "")
	for _, ev := range []string{"open", "close"} {
		c.counts(ctx, ch, c.transitions, store.KindWindow, ev, ev)
		c.counts(ctx, ch, c.failures, store.KindWindow, ev+"-failed", ev)
	}
	if last, err := c.st.LastScheduleSuccess(ctx); err == nil {
		for name, t := range last {
			ch <- prometheus.MustNewConstMetric(c.lastOK, prometheus.GaugeValue, float64(t.UnixNano())/1e9, name)
		}
	} else {
		c.log.Error("metrics: last successes", "error", err)
	}
	if ths, err := c.st.LastRunThresholds(ctx); err == nil {
		for name, byState := range ths {
			for _, state := range []string{store.ThresholdPassed, store.ThresholdFailed, store.ThresholdNoBaseline} {
				ch <- prometheus.MustNewConstMetric(c.thresholds, prometheus.GaugeValue, float64(byState[state]), name, state)
			}
		}
	} else {
		c.log.Error("metrics: thresholds", "error", err)
	}
	running, _ := c.sched.Current()
	ch <- prometheus.MustNewConstMetric(c.inProgress, prometheus.GaugeValue, boolValue(running > 0))
	_, wins := c.sched.Status(0)
	for _, w := range wins {
		ch <- prometheus.MustNewConstMetric(c.windowOpen, prometheus.GaugeValue, boolValue(w.Open), w.Name)
		ch <- prometheus.MustNewConstMetric(c.windowFailing, prometheus.GaugeValue, boolValue(w.Failing), w.Name)
	}
}

// counts sends one counter per name of kind/event, with label (if any)
// after the name.
func (c *collector) counts(ctx context.Context, ch chan<- prometheus.Metric, d *prometheus.Desc, kind, event, label string) {
	n, err := c.st.CountScheduleEvents(ctx, kind, event)
	if err != nil {
		c.log.Error("metrics: count events", "event", event, "error", err)
		return
	}
	for name, v := range n {
		labels := []string{name}
		if label != "" {
			labels = append(labels, label)
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// RunDurations is the histogram of the daemon's run durations, by schedule
// and status; the daemon observes each run's end into it.
func RunDurations(reg *prometheus.Registry) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "wtd_run_duration_seconds",
		Help:    "How long the daemon's runs took, by schedule and status.",
		Buckets: []float64{1, 10, 60, 300, 900, 1800, 3600, 7200, 14400},
	}, []string{"schedule", "status"})
	reg.MustRegister(h)
	return h
}
