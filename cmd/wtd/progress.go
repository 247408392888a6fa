package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows long work: live bars when stdout is a terminal, plain
// lines (at most every 5 s per task) otherwise.
type progress struct {
	env Env
	mu  sync.Mutex
	p   *mpb.Progress
	// bars by label, with their start for the rate
	bars   map[string]*mpb.Bar
	last   map[string]time.Time
	starts map[string]time.Time
	done   map[string]int64
	total  map[string]int64
	first  map[string]int64 // done when the task was first seen
	closed bool
}

func newProgress(env Env) *progress {
	pr := &progress{env: env, bars: map[string]*mpb.Bar{}, last: map[string]time.Time{}, starts: map[string]time.Time{},
		done: map[string]int64{}, total: map[string]int64{}, first: map[string]int64{}}
	if env.Terminal {
		pr.p = mpb.New(mpb.WithOutput(env.Stdout), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond))
	}
	return pr
}

// update reports done of total for a task (label), e.g. "load bench.c".
func (pr *progress) update(label string, done, total int64) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return
	}
	// A label seen again from the start is a new task.
	if prev, ok := pr.done[label]; !ok || done < prev || (prev >= pr.total[label] && pr.total[label] > 0) {
		pr.starts[label] = time.Now()
		pr.first[label] = done
		delete(pr.last, label)
	}
	pr.done[label], pr.total[label] = done, total
	if pr.p == nil {
		pr.plain(label, done, total)
		return
	}
	bar, ok := pr.bars[label]
	if !ok || bar.Completed() {
		start, firstDone := pr.starts[label], pr.first[label]
		bar = pr.p.AddBar(total,
			mpb.PrependDecorators(decor.Name(label, decor.WC{W: len(label) + 1, C: decor.DindentRight}), decor.Elapsed(decor.ET_STYLE_MMSS)),
			mpb.AppendDecorators(decor.CountersNoUnit("%d / %d"), decor.Any(func(s decor.Statistics) string {
				el := time.Since(start).Seconds()
				if el <= 0.2 {
					return ""
				}
				return fmt.Sprintf(" %.0f/s", float64(s.Current-firstDone)/el)
			})),
			mpb.BarRemoveOnComplete(),
		)
		pr.bars[label] = bar
	}
	if total > 0 {
		bar.SetTotal(total, false)
	}
	bar.SetCurrent(done)
	if total > 0 && done >= total {
		bar.SetTotal(total, true)
	}
}

func (pr *progress) plain(label string, done, total int64) {
	now := time.Now()
	if t, ok := pr.last[label]; ok && now.Sub(t) < 5*time.Second && done < total {
		return
	}
	pr.last[label] = now
	el := now.Sub(pr.starts[label]).Seconds()
	rate := ""
	if el > 0.2 {
		rate = fmt.Sprintf(", %.0f/s", float64(done-pr.first[label])/el)
	}
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	fmt.Fprintf(pr.env.Stdout, "%s %-5s %-6s %s: %d/%d (%.0f%%)%s\n", now.Format("15:04:05"), "info", "run", label, done, total, pct, rate)
}

// logWriter is where run events go: above the bars on a terminal.
func (pr *progress) logWriter() io.Writer { return writerFunc(pr.write) }

// outWriter is where report tables and playbook output go.
func (pr *progress) outWriter() io.Writer { return writerFunc(pr.write) }

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
	for _, b := range pr.bars {
		b.Abort(true)
	}
	pr.mu.Unlock()
	if p != nil {
		p.Wait()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
