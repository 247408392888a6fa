package hostctl

import (
	"bytes"
	"encoding/json"
	"strings"
)

// How much of a server's log an error message quotes.
const (
	quoteLines = 3   // plain lines, when no error-level line is found
	quoteChars = 400 // per line or attribute document
)

// logLine is a mongod 4.4+ structured log line:
// {"t":{...},"s":"E","c":"STORAGE","id":..,"ctx":"..","msg":"..","attr":{..}}.
type logLine struct {
	Severity string          `json:"s"`
	Msg      string          `json:"msg"`
	Attr     json.RawMessage `json:"attr"`
}

// parseLogLine parses line as a structured log line; ok is false for plain
// text.
func parseLogLine(line string) (logLine, bool) {
	var l logLine
	if !strings.HasPrefix(strings.TrimSpace(line), "{") || json.Unmarshal([]byte(line), &l) != nil || l.Msg == "" {
		return logLine{}, false
	}
	return l, true
}

// text is the line's message and attributes, on one line.
func (l logLine) text() string {
	out := clip(strings.Join(strings.Fields(l.Msg), " "))
	var attr bytes.Buffer
	if len(l.Attr) > 0 && json.Compact(&attr, l.Attr) == nil && attr.String() != "{}" && attr.String() != "null" {
		out += " " + clip(attr.String())
	}
	return out
}

func (l logLine) isError() bool { return l.Severity == "E" || l.Severity == "F" }

// summarizeLog words the end of a server's output for an error message.
// For mongod's JSON log it is the message and attributes of the last
// error-level line (severity E or F; one with attributes is preferred,
// since the very last fatal line often only says "aborting"). Otherwise it
// is the last few lines, JSON ones as message and attributes.
func summarizeLog(lines []string) string {
	var last *logLine
	for i := len(lines) - 1; i >= 0; i-- {
		l, ok := parseLogLine(lines[i])
		if !ok || !l.isError() {
			continue
		}
		if last == nil {
			last = &l
		}
		if len(l.Attr) > 0 {
			last = &l
			break
		}
	}
	if last != nil {
		return "last error in its log: " + last.text()
	}
	if len(lines) == 0 {
		return "its log is empty"
	}
	if len(lines) > quoteLines {
		lines = lines[len(lines)-quoteLines:]
	}
	quoted := make([]string, len(lines))
	for i, line := range lines {
		if l, ok := parseLogLine(line); ok {
			quoted[i] = l.text()
		} else {
			quoted[i] = clip(line)
		}
	}
	return "last log lines: " + strings.Join(quoted, " | ")
}

// clip shortens s to quoteChars bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= quoteChars {
		return s
	}
	cut := quoteChars
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
