// Package mlog writes mongod 4.4's structured JSON log lines (logv2), one
// JSON object per line:
//
//	{"t":{"$date":"2026-12-01T07:40:00.123+00:00"},"s":"I",  "c":"NETWORK",  "id":23016,   "ctx":"listener","msg":"Waiting for connections","attr":{"port":27017,"ssl":"off"}}
//
// The padding after the "s", "c" and "id" fields is the one mongod's JSON
// formatter emits; lines are still plain JSON.
package mlog

import (
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Severity is a log severity. Its String is the letter mongod writes.
type Severity int

// Severities, most severe first. Debug1..Debug5 print as D1..D5.
const (
	Fatal Severity = iota
	Error
	Warning
	Info
	Debug1
	Debug2
	Debug3
	Debug4
	Debug5
)

// Debug returns the debug severity of the given level (1..5, clamped).
func Debug(level int) Severity {
	level = min(max(level, 1), 5)
	return Debug1 + Severity(level-1)
}

// String returns "F", "E", "W", "I" or "D1".."D5".
func (s Severity) String() string {
	switch {
	case s <= Fatal:
		return "F"
	case s == Error:
		return "E"
	case s == Warning:
		return "W"
	case s == Info:
		return "I"
	case s > Debug5:
		return "D5"
	}
	return "D" + strconv.Itoa(int(s-Info))
}

// debugLevel is 0 for non-debug severities, else 1..5.
func (s Severity) debugLevel() int {
	if s < Debug1 {
		return 0
	}
	return min(int(s-Info), 5)
}

// Attr is one attribute of a log line.
type Attr struct {
	Key   string
	Value any
}

// A builds an Attr.
func A(key string, v any) Attr { return Attr{Key: key, Value: v} }

// Logger writes log lines. It is safe for concurrent use; each line is
// written with a single Write call.
type Logger struct {
	mu        sync.Mutex
	w         io.Writer
	file      *os.File // set by Open; closed by Close
	verbosity int
	now       func() time.Time
}

// New returns a Logger writing to w. Close does not close w.
func New(w io.Writer) *Logger {
	return &Logger{w: w, now: time.Now}
}

// SetVerbosity sets systemLog.verbosity: debug lines of level n are
// written only when n <= v, as mongod does. The default is 0.
func (l *Logger) SetVerbosity(v int) {
	l.mu.Lock()
	l.verbosity = v
	l.mu.Unlock()
}

// SetClock replaces the time source (for tests).
func (l *Logger) SetClock(now func() time.Time) {
	l.mu.Lock()
	l.now = now
	l.mu.Unlock()
}

// Enabled reports whether a line of severity sev would be written.
func (l *Logger) Enabled(sev Severity) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return sev.debugLevel() <= l.verbosity
}

// bufPool holds line buffers.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Log writes one line. Write errors are ignored, as mongod ignores them.
func (l *Logger) Log(sev Severity, component string, id int, ctx string, msg string, attrs ...Attr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sev.debugLevel() > l.verbosity {
		return
	}
	bp := bufPool.Get().(*[]byte)
	line := appendLine((*bp)[:0], l.now(), sev, component, id, ctx, msg, attrs)
	_, _ = l.w.Write(line)
	*bp = line
	bufPool.Put(bp)
}

// Info logs at severity I.
func (l *Logger) Info(component string, id int, ctx, msg string, attrs ...Attr) {
	l.Log(Info, component, id, ctx, msg, attrs...)
}

// Warning logs at severity W.
func (l *Logger) Warning(component string, id int, ctx, msg string, attrs ...Attr) {
	l.Log(Warning, component, id, ctx, msg, attrs...)
}

// Error logs at severity E.
func (l *Logger) Error(component string, id int, ctx, msg string, attrs ...Attr) {
	l.Log(Error, component, id, ctx, msg, attrs...)
}

// Fatal logs at severity F. It does not exit.
func (l *Logger) Fatal(component string, id int, ctx, msg string, attrs ...Attr) {
	l.Log(Fatal, component, id, ctx, msg, attrs...)
}

// Close closes the file opened by Open; later lines are discarded. For a
// Logger made by New it does nothing and returns nil.
func (l *Logger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file = nil
	l.w = io.Discard
	return err
}

// timeLayout is mongod's default iso8601-local timestamp format.
const timeLayout = "2006-01-02T15:04:05.000-07:00"

// appendLine renders one log line, newline included.
func appendLine(b []byte, t time.Time, sev Severity, component string, id int, ctx, msg string,
	attrs []Attr) []byte {
	b = append(b, `{"t":{"$date":"`...)
	b = t.AppendFormat(b, timeLayout)
	b = append(b, `"},"s":"`...)
	s := sev.String()
	b = append(b, s...)
	b = append(b, `",`...)
	b = pad(b, 3-len(s))
	b = append(b, `"c":`...)
	b = appendString(b, component)
	b = append(b, ',')
	b = pad(b, 9-len(component))
	b = append(b, `"id":`...)
	idText := strconv.Itoa(id)
	b = append(b, idText...)
	b = append(b, ',')
	b = pad(b, 8-len(idText))
	b = append(b, `"ctx":`...)
	b = appendString(b, ctx)
	b = append(b, `,"msg":`...)
	b = appendString(b, msg)
	if len(attrs) > 0 {
		b = append(b, `,"attr":{`...)
		for i, a := range attrs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, a.Key)
			b = append(b, ':')
			b = appendValue(b, a.Value)
		}
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// pad appends n spaces (nothing when n <= 0).
func pad(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}
