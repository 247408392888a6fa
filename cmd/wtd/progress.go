package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// plainEvery is how often plain output reports a task (once per task per
// this period, plus its start and its end).
const plainEvery = 5 * time.Second

// progress shows long work: live bars when stdout is a terminal, plain
// lines (at most one per task every 5 s) otherwise.
type progress struct {
	env    Env
	mu     sync.Mutex
	p      *mpb.Progress
	tasks  map[string]*task
	closed bool
}

// task is one load or workload being shown.
type task struct {
	bar      *mpb.Bar
	start    time.Time
	first    int64 // done when the task was first seen
	done     int64
	shown    atomic.Int64  // done, for the bar's decorators (read on mpb's goroutine)
	total    int64         // 0: bounded by duration only
	duration time.Duration // 0: bounded by total only
	said     time.Time     // last plain line
	over     bool          // the run said the task ended
	ended    bool          // its end was shown
}

func newProgress(env Env) *progress {
	pr := &progress{env: env, tasks: map[string]*task{}}
	if env.Terminal {
		pr.p = mpb.New(mpb.WithOutput(env.Stdout), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	}
	return pr
}

// finished reports whether the task reached its bound.
func (tk *task) finished(now time.Time) bool {
	if tk.over {
		return true
	}
	if tk.total > 0 {
		return tk.done >= tk.total
	}
	return tk.duration > 0 && now.Sub(tk.start) >= tk.duration
}

// rate is operations per second since the task was first seen.
func (tk *task) rate(now time.Time) float64 {
	el := now.Sub(tk.start).Seconds()
	if el <= 0.2 {
		return 0
	}
	return float64(tk.done-tk.first) / el
}

// update reports a task (label, e.g. "load bench.c"): done of total, or
// done within duration when only a duration bounds it. A total < 0 says the
// task has ended, done being its final count.
func (pr *progress) update(label string, done, total int64, duration time.Duration) {
	label = termLine(label) // names a namespace or workload of the playbook
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	now := time.Now()
	tk, ok := pr.tasks[label]
	if ok && total < 0 {
		// The end of a task shown already.
		tk.done = max(tk.done, done)
		tk.shown.Store(tk.done)
		pr.finish(label, tk, now)
		return
	}
	if total < 0 {
		return // the end of a task too short to have been shown
	}
	// A label seen again from the start is a new task.
	if !ok || done < tk.done || (tk.ended && done == 0) {
		if ok && tk.bar != nil && !tk.bar.Completed() {
			tk.bar.Abort(true)
		}
		tk = &task{start: now, first: done}
		pr.tasks[label] = tk
	}
	tk.done, tk.total, tk.duration = done, total, duration
	tk.shown.Store(done)
	if pr.p == nil {
		pr.plain(label, tk, now)
		return
	}
	pr.bar(label, tk, now)
}

// finish shows a task's end: its last plain line, or its bar completed.
func (pr *progress) finish(label string, tk *task, now time.Time) {
	if tk.ended {
		return
	}
	tk.over = true
	if pr.p == nil {
		pr.plain(label, tk, now) // prints its end line
		return
	}
	tk.ended = true
	if tk.bar != nil {
		tk.bar.SetTotal(-1, true)
	}
}

// bar draws a task on the terminal: a count bar, or a time bar with the
// operations so far when only a duration bounds the task.
func (pr *progress) bar(label string, tk *task, now time.Time) {
	byTime := tk.total <= 0 && tk.duration > 0
	if tk.bar == nil {
		max := tk.total
		if byTime {
			max = tk.duration.Milliseconds()
		}
		// The decorators run on mpb's goroutine: they read only what does
		// not change after this point, and the atomic count.
		start, first, dur, shown := tk.start, tk.first, tk.duration, &tk.shown
		counter := decor.CountersNoUnit("%d / %d")
		if byTime {
			counter = decor.Any(func(decor.Statistics) string {
				return fmt.Sprintf("%d ops, %s of %s", shown.Load(), time.Since(start).Round(time.Second), dur)
			})
		}
		tk.bar = pr.p.AddBar(max,
			mpb.PrependDecorators(decor.Name(label, decor.WC{W: len(label) + 1, C: decor.DindentRight}), decor.Elapsed(decor.ET_STYLE_MMSS)),
			mpb.AppendDecorators(counter, decor.Any(func(decor.Statistics) string {
				if el := time.Since(start).Seconds(); el > 0.2 {
					return fmt.Sprintf(" %.0f/s", float64(shown.Load()-first)/el)
				}
				return ""
			})),
			mpb.BarRemoveOnComplete(),
		)
	}
	if byTime {
		tk.bar.SetCurrent(min(now.Sub(tk.start).Milliseconds(), tk.duration.Milliseconds()))
	} else {
		if tk.total > 0 {
			tk.bar.SetTotal(tk.total, false)
		}
		tk.bar.SetCurrent(tk.done)
	}
	if tk.finished(now) && !tk.ended {
		tk.ended = true
		tk.bar.SetTotal(-1, true)
	}
}

// plain prints a task's line at its start, every plainEvery and at its
// end.
func (pr *progress) plain(label string, tk *task, now time.Time) {
	end := tk.finished(now)
	if tk.ended || (!tk.said.IsZero() && now.Sub(tk.said) < plainEvery && !end) {
		return
	}
	if end {
		tk.ended = true
	}
	tk.said = now
	var what string
	switch {
	case tk.total > 0:
		what = fmt.Sprintf("%d/%d (%.0f%%)", tk.done, tk.total, 100*float64(tk.done)/float64(tk.total))
	case tk.duration > 0:
		el := min(now.Sub(tk.start), tk.duration)
		what = fmt.Sprintf("%d ops, %s of %s (%.0f%%)", tk.done, el.Round(100*time.Millisecond), tk.duration, 100*el.Seconds()/tk.duration.Seconds())
	default:
		what = fmt.Sprintf("%d ops", tk.done)
	}
	if r := tk.rate(now); r > 0 {
		what += fmt.Sprintf(", %.0f/s", r)
	}
	fmt.Fprintf(pr.env.Stdout, "%s %-5s %-6s %s: %s\n", now.Format("15:04:05"), "info", "run", label, what)
}

// logWriter is where run events go: above the bars on a terminal. Their
// control characters are escaped (termWriter): events quote step names,
// labels and what the playbook logs.
func (pr *progress) logWriter() io.Writer { return termWriter{writerFunc(pr.write)} }

// outWriter is where report tables and playbook output go, escaped as the
// events are.
func (pr *progress) outWriter() io.Writer { return termWriter{writerFunc(pr.write)} }

func (pr *progress) write(b []byte) (int, error) {
	pr.mu.Lock()
	p := pr.p
	closed := pr.closed
	pr.mu.Unlock()
	if p != nil && !closed {
		return p.Write(b)
	}
	return pr.env.Stdout.Write(b)
}

func (pr *progress) close() {
	pr.mu.Lock()
	if pr.closed {
		pr.mu.Unlock()
		return
	}
	pr.closed = true
	p := pr.p
	for _, tk := range pr.tasks {
		if tk.bar != nil {
			tk.bar.Abort(true)
		}
	}
	pr.mu.Unlock()
	if p != nil {
		p.Wait()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
