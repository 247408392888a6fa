package web

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"wtd/compare"
)

// PrintSchedules writes reply as `wtd schedules` shows it: a table of the
// schedules (next fire, last run and its verdict, skips) and one of the windows (next
// opening, state).
func PrintSchedules(w io.Writer, reply SchedulesReply) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tCRON\tNEXT\tLAST RUN\tVERDICT\tSKIPS\tPLAYBOOK")
	for _, s := range reply.Schedules {
		last, verdict := "–", "–"
		if s.LastRun != nil {
			last = fmt.Sprintf("%d %s", s.LastRun.ID, s.LastRun.Status)
			if v := s.LastRun.Verdict; v != nil {
				verdict = v.Verdict
				switch {
				case len(v.History) > 0:
					verdict += fmt.Sprintf(" (vs last %d)", len(v.History))
				case v.Baseline > 0:
					verdict += fmt.Sprintf(" (vs %d)", v.Baseline)
				}
				if len(v.HostBusy) > 0 && (v.Verdict == compare.Slower || v.Verdict == compare.Faster) {
					verdict += " (not reliable)"
				}
			}
		}
		if s.Running > 0 {
			last = fmt.Sprintf("%d running", s.Running)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.Cron, first(s.Next), last, verdict, s.Skips, s.Playbook)
	}
	tw.Flush()
	if len(reply.Windows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WINDOW\tCRON\tDURATION\tNEXT OPEN\tSTATE\tSERVER")
	for _, win := range reply.Windows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", win.Name, win.Cron, win.Duration, first(win.Next), windowState(win), win.Server)
	}
	tw.Flush()
}

// first is the first of times, to the minute, or to the second when it
// does not fall on one (an @every 30s schedule's).
func first(times []time.Time) string {
	if len(times) == 0 {
		return "never"
	}
	t := times[0].Local()
	if t.Second() != 0 {
		return t.Format("2006-01-02 15:04:05 MST")
	}
	return t.Format("2006-01-02 15:04 MST")
}

func windowState(w WindowView) string {
	state := "closed"
	switch {
	case w.Open && w.ClosesAt != nil:
		state = "open until " + w.ClosesAt.Local().Format("15:04:05")
	case w.Open:
		state = "open"
	case w.Wanted && w.ClosesAt != nil:
		state = "due open until " + w.ClosesAt.Local().Format("15:04:05")
	}
	if w.Failing {
		state += fmt.Sprintf(", failing (%d attempts): %s", w.Failures, w.Error)
	}
	return state
}
