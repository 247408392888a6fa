package hostctl

import (
	"bytes"
	"io"
	"sync"
)

// logTailLines is how many of a server's last output lines are kept for
// error messages.
const logTailLines = 50

// logTail is an io.Writer that forwards everything to w (the log file) and
// keeps the last max complete lines in memory.
type logTail struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	lines   []string // ring buffer
	next    int      // index of the oldest line once full
	partial []byte   // an unterminated last line
	err     error    // first error writing to w
}

func newLogTail(w io.Writer, max int) *logTail {
	return &logTail{w: w, max: max}
}

// Write records p's lines and writes p to the underlying writer. It never
// fails: a failing log file must not stop the server's output from being
// drained, so the first write error is kept for Err instead.
func (t *logTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.partial = append(t.partial, rest...)
			break
		}
		line := string(append(t.partial, rest[:i]...))
		t.partial = t.partial[:0]
		t.add(line)
		rest = rest[i+1:]
	}
	if t.w != nil && t.err == nil {
		if _, err := t.w.Write(p); err != nil {
			t.err = err
		}
	}
	return len(p), nil
}

// Err returns the first error writing to the log file.
func (t *logTail) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *logTail) add(line string) {
	if len(t.lines) < t.max {
		t.lines = append(t.lines, line)
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % t.max
}

// Last returns up to n of the most recent lines, oldest first, including
// an unterminated last line.
func (t *logTail) Last(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]string, 0, len(t.lines)+1)
	all = append(all, t.lines[t.next:]...)
	all = append(all, t.lines[:t.next]...)
	if len(t.partial) > 0 {
		all = append(all, string(t.partial))
	}
	if n >= 0 && n < len(all) {
		all = all[len(all)-n:]
	}
	return all
}
