package daemon

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"wtd/schedule"
	"wtd/web"
)

// metrics makes the daemon's registry and the run-end hook that observes
// run durations into it.
func (d *daemon) metrics() (*prometheus.Registry, []schedule.RunEndHook) {
	reg := prometheus.NewRegistry()
	durations := web.RunDurations(reg)
	observe := func(_ context.Context, end schedule.RunEnd) map[string]any {
		durations.WithLabelValues(end.Schedule, end.Status).Observe(end.Duration.Seconds())
		return nil
	}
	return reg, []schedule.RunEndHook{observe}
}
