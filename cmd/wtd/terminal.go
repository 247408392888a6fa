package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"wtd/engine/store"
)

// Text from a playbook (what it prints and logs, step names, labels, file
// names, error messages) reaches the operator's terminal only through
// termLine and termText: a terminal acts on control characters (ESC starts
// sequences that set the window title, write the clipboard or clear the
// screen), so they are shown escaped instead. --json output and the results
// database keep the text as the playbook wrote it. Both also mask the
// password of every MongoDB URI (store.RedactURI), as the results database
// does: a playbook's output, its errors and wtd's log never show one.

// termLine makes s safe to show as one line of a terminal: newlines and
// tabs as \n and \t, every other control character (C0, DEL, C1) and each
// byte that is not UTF-8 as \xNN or \uNNNN, and the Unicode bidirectional
// overrides (which reorder what follows them on the screen) as \uNNNN;
// URI passwords masked.
func termLine(s string) string { return termEscape(s, false) }

// termText is termLine for text that may span lines: newlines and tabs are
// kept, everything else is escaped as termLine does.
func termText(s string) string { return termEscape(s, true) }

func termEscape(s string, keepLines bool) string {
	s = store.RedactURI(s)
	if termSafe(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case termUnsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// termSafe reports whether s needs no escaping (the common case, checked
// without building a new string).
func termSafe(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && !(keepLines && (c == '\n' || c == '\t'))) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || termUnsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// termUnsafeRune reports whether r, a rune above ASCII, is a C1 control
// (U+0080-U+009F, which some terminals act on like ESC sequences) or a
// bidirectional embedding, override or isolate (U+202A-U+202E,
// U+2066-U+2069).
func termUnsafeRune(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// termWriter escapes what passes through it with termText: for output
// that goes to a terminal and holds text from playbooks but no terminal
// sequences of wtd's own. Each write is masked on its own: a URI must come
// in one write (a line of the run's log or output, a log record).
type termWriter struct{ w io.Writer }

// Write writes termText(b); it returns len(b) when all of it was written.
func (t termWriter) Write(b []byte) (int, error) {
	s := string(b)
	out := termText(s)
	if out == s {
		return t.w.Write(b)
	}
	if _, err := io.WriteString(t.w, out); err != nil {
		return 0, err
	}
	return len(b), nil
}
