package web

import (
	"strings"
	"testing"
	"time"

	"wtd/schedule"
)

// wtd schedules prints a fire time to the second it comes at: an @every
// 30s schedule's next fire at 12:00:30 is not shown as 12:00, which reads
// as half a minute early; a cron time on the minute keeps its short form.
func TestSchedulesTableNamesTheSecondOfAFire(t *testing.T) {
	at := func(m, s int) time.Time { return time.Date(2030, 1, 15, 12, m, s, 0, time.Local) }
	var out strings.Builder
	PrintSchedules(&out, Views([]schedule.ScheduleStatus{
		{Name: "every", Cron: "@every 30s", Next: []time.Time{at(0, 30)}},
		{Name: "nightly", Cron: "0 12 * * *", Next: []time.Time{at(0, 0)}},
	}, []schedule.WindowStatus{{Name: "w", Cron: "@every 90s", Next: []time.Time{at(1, 30)}}}))
	for _, want := range []string{"2030-01-15 12:00:30 ", "2030-01-15 12:00 ", "2030-01-15 12:01:30 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
