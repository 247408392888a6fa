package hostctl

import (
	"fmt"
	"strconv"
	"strings"
)

// WiredTiger configuration strings, read the way WiredTiger 3.2.1 reads
// them (src/config/config.c, __config_next): keys and values are bare
// tokens or double-quoted strings, pairs are separated by ',' (or
// whitespace), a key and its value by '=' or ':', and values nest in
// (...), [...] or {...}. WiredTiger looks a nested key up either inside
// its parent's value (log=(path=x), log="path=x", log=[path=x]) or as a
// dotted key (log.path=x), so the check below reads every value as a
// configuration string of its own and splits every key at its dots.

// wtKind is the type of a key or value (WT_CONFIG_ITEM_*).
type wtKind int

const (
	wtTrue   wtKind = iota // a key without a value
	wtID                   // a bare token starting with a letter, '_', '.' or '/'
	wtNum                  // a bare token starting with a digit or '-'
	wtString               // a double-quoted string: the text between the quotes, escapes as written
	wtStruct               // (...), [...] or {...}: the text with its brackets
)

// wtItem is a key or a value of a configuration string.
type wtItem struct {
	kind  wtKind
	start int // offset of text in the string parsed; -1 until it starts
	text  string
}

// wtPair is one key and its value.
type wtPair struct {
	key, value wtItem
}

// wtSyntaxError is a string WiredTiger's parser would stop at.
type wtSyntaxError struct {
	offset int
	msg    string
}

func (e *wtSyntaxError) Error() string {
	return fmt.Sprintf("it does not parse as a WiredTiger configuration string (at byte %d: %s), and WiredTiger might read it otherwise than wtd; write key=value pairs separated by commas, nested values in (...)", e.offset, e.msg)
}

// wtMode is the character table the scanner is in.
type wtMode int

const (
	modeStruct wtMode = iota // between tokens (gostruct)
	modeBare                 // in a bare token (gobare)
	modeString               // in a quoted string (gostring)
	modeUTF8                 // in a UTF-8 sequence of a quoted string (goutf8_continue)
	modeEscape               // after a backslash in a quoted string (goesc)
)

// wtAction is what a character does in a mode (CONFIG_ACTION).
type wtAction int

const (
	actBad wtAction = iota
	actLoop
	actDown
	actUp
	actValue
	actNext
	actQuoteDown
	actQuoteUp
	actEscape
	actUnescape
	actBare
	actNumBare
	actUnbare
	actUTF8Two
	actUTF8Three
	actUTF8Four
	actUTF8Continue
)

// wtActionOf is WiredTiger 3.2.1's character tables (gostruct, gobare,
// gostring, goutf8_continue, goesc).
func wtActionOf(m wtMode, c byte) wtAction {
	switch m {
	case modeStruct:
		switch {
		case c == '\t' || c == '\n' || c == '\r' || c == ' ':
			return actLoop
		case c == '"':
			return actQuoteUp
		case c == ':' || c == '=':
			return actValue
		case c == ',':
			return actNext
		case c == '(' || c == '[' || c == '{':
			return actUp
		case c == ')' || c == ']' || c == '}':
			return actDown
		case c == '-' || c >= '0' && c <= '9':
			return actNumBare
		case c == '_' || c == '.' || c == '/' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			return actBare
		}
	case modeBare:
		switch {
		case c == '\t' || c == '\n' || c == '\r' || c == ' ' || c == ':' || c == '=' || c == ',' || c == ')' || c == ']' || c == '}':
			return actUnbare
		case c > 32 && c < 127:
			return actLoop
		}
	case modeString:
		switch {
		case c == '"':
			return actQuoteDown
		case c == '\\':
			return actEscape
		case c >= 32 && c < 127:
			return actLoop
		case c >= 192 && c <= 223:
			return actUTF8Two
		case c >= 224 && c <= 239:
			return actUTF8Three
		case c >= 240 && c <= 247:
			return actUTF8Four
		}
	case modeUTF8:
		if c >= 128 && c <= 191 {
			return actUTF8Continue
		}
	case modeEscape:
		if strings.IndexByte(`"\/bfnrtu`, c) >= 0 {
			return actUnescape
		}
	}
	return actBad
}

// wtScanner walks a configuration string as __config_next does.
type wtScanner struct {
	s          string
	cur, depth int
	top        int // the depth of this string's pairs; -1 before the first token
	mode       wtMode
}

func newWTScanner(s string) *wtScanner { return &wtScanner{s: s, top: -1} }

func (p *wtScanner) fail(msg string) error { return &wtSyntaxError{offset: p.cur, msg: msg} }

// push starts an item at the scanner's depth (PUSH).
func (p *wtScanner) push(out *wtItem, skip int, kind wtKind) error {
	if p.top == -1 {
		p.top = p.depth
	}
	if p.depth == p.top {
		if len(out.text) > 0 {
			return p.fail("a new value starts without a separator")
		}
		out.kind, out.start = kind, p.cur+skip
	}
	return nil
}

// capture ends the item at the scanner's depth (CAP).
func (p *wtScanner) capture(out *wtItem, back int) error {
	if p.depth != p.top {
		return nil
	}
	end := p.cur + back + 1
	if out.start < 0 || end < out.start {
		return p.fail("a bracket closes what did not open here")
	}
	out.text = p.s[out.start:end]
	return nil
}

// next returns the next pair; ok is false at the end of the string.
func (p *wtScanner) next() (pair wtPair, ok bool, err error) {
	pair.key.start, pair.value.start = -1, -1
	out := &pair.key
	utf8Left := 0
	for p.cur < len(p.s) {
		switch wtActionOf(p.mode, p.s[p.cur]) {
		case actLoop:
		case actBad:
			return pair, false, p.fail("unexpected character " + strconv.QuoteRune(rune(p.s[p.cur])))
		case actDown:
			if p.top == -1 {
				return pair, false, p.fail("unbalanced brackets")
			}
			p.depth--
			err = p.capture(out, 0)
		case actUp:
			if p.top == -1 {
				p.top = 1
			}
			err = p.push(out, 0, wtStruct)
			p.depth++
		case actValue:
			if p.depth == p.top {
				if out == &pair.value && p.s[p.cur] != ':' {
					return pair, false, p.fail("the value is already complete")
				}
				out = &pair.value
			}
		case actNext:
			if p.depth == p.top && len(pair.key.text) > 0 {
				p.cur++
				return pair, true, nil
			}
		case actQuoteDown:
			err = p.capture(out, -1)
			p.mode = modeStruct
		case actQuoteUp:
			err = p.push(out, 1, wtString)
			p.mode = modeString
		case actEscape:
			p.mode = modeEscape
		case actUnescape:
			p.mode = modeString
		case actBare:
			err = p.push(out, 0, wtID)
			p.mode = modeBare
		case actNumBare:
			err = p.push(out, 0, wtNum)
			p.mode = modeBare
		case actUnbare:
			if err = p.capture(out, -1); err != nil {
				return pair, false, err
			}
			p.mode = modeStruct
			continue
		case actUTF8Two, actUTF8Three, actUTF8Four:
			utf8Left = int(wtActionOf(p.mode, p.s[p.cur])-actUTF8Two) + 1
			p.mode = modeUTF8
		case actUTF8Continue:
			if utf8Left--; utf8Left == 0 {
				p.mode = modeString
			}
		}
		if err != nil {
			return pair, false, err
		}
		p.cur++
	}
	if p.mode == modeBare {
		if err := p.capture(out, -1); err != nil {
			return pair, false, err
		}
		p.mode = modeStruct
	}
	if p.depth <= p.top && len(pair.key.text) > 0 {
		return pair, true, nil
	}
	if p.depth == 0 {
		return pair, false, nil
	}
	return pair, false, p.fail("unbalanced brackets")
}

// parseWTConfig splits a configuration string into its pairs, in order, as
// WiredTiger 3.2.1 does.
func parseWTConfig(s string) ([]wtPair, error) {
	p := newWTScanner(s)
	var pairs []wtPair
	for {
		pair, ok, err := p.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return pairs, nil
		}
		pairs = append(pairs, pair)
	}
}

// wtUnescape decodes a quoted string's escapes (\" \\ \/ \b \f \n \r \t
// \uXXXX); WiredTiger compares keys as written, wtd also as decoded.
func wtUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maxWTDepth bounds how deep the check reads values inside values.
const maxWTDepth = 32

// wtRefusedError is a key the sandbox refuses.
type wtRefusedError struct {
	key  string // its path as written, or only the refused part
	rule wtRefusal
}

func (e *wtRefusedError) Error() string {
	return fmt.Sprintf("the WiredTiger key %q is refused: %s; %s", e.key, e.rule.why, e.rule.instead())
}

// CheckWTConfig refuses a WiredTiger configuration string that names a
// file, directory, shared library or store (see wtRefused), in any
// spelling WiredTiger reads: quoted or bare keys, '=' or ':', nested in
// (...), [...], {...} or a quoted value, or dotted (log.path=). A string
// WiredTiger's parser would stop at is refused too. The error names the
// key, never the value.
func CheckWTConfig(cfg string) error {
	c := wtChecker{budget: 64*len(cfg) + 4096}
	return c.check(cfg, 0, nil, 0, true)
}

// wtChecker reads values inside values within a budget of bytes parsed
// (a quoted value is read both as written and decoded).
type wtChecker struct {
	budget int
}

// check checks the pairs of s, found at offset base of the whole string
// and nested under parents. A string that does not parse is an error when
// strict (a whole string, a bracketed value), and a plain string value
// otherwise.
func (c *wtChecker) check(s string, base int, parents []string, depth int, strict bool) error {
	if c.budget -= len(s); depth > maxWTDepth || c.budget < 0 {
		return fmt.Errorf("it nests values too deep for wtd to check (at most %d levels)", maxWTDepth)
	}
	pairs, err := parseWTConfig(s)
	if err != nil {
		if se, ok := err.(*wtSyntaxError); ok && strict {
			se.offset += base
			return se
		}
		return nil
	}
	for _, p := range pairs {
		if err := c.checkPair(p, base, parents, depth); err != nil {
			return err
		}
	}
	return nil
}

func (c *wtChecker) checkPair(p wtPair, base int, parents []string, depth int) error {
	if p.key.kind == wtStruct {
		return &wtSyntaxError{offset: base + p.key.start, msg: "a key in brackets"}
	}
	names := []string{p.key.text}
	if p.key.kind == wtString {
		if u := wtUnescape(p.key.text); u != p.key.text {
			names = append(names, u)
		}
	}
	for _, name := range names {
		parts := strings.Split(name, ".")
		for i, part := range parts {
			rule, refused := wtRefused[strings.ToLower(strings.TrimSpace(part))]
			if !refused || i == len(parts)-1 && rule.allows(p.value) {
				continue
			}
			return &wtRefusedError{key: keyPath(append(append([]string(nil), parents...), parts[:i+1]...)), rule: rule}
		}
	}
	path := append(append([]string(nil), parents...), strings.Split(p.key.text, ".")...)
	at := base + p.value.start
	switch p.value.kind {
	case wtStruct:
		return c.check(p.value.text, at, path, depth+1, true)
	case wtString:
		if err := c.check(p.value.text, at, path, depth+1, false); err != nil {
			return err
		}
		if u := wtUnescape(p.value.text); u != p.value.text {
			return c.check(u, at, path, depth+1, false)
		}
	case wtID, wtNum:
		return c.check(p.value.text, at, path, depth+1, false)
	}
	return nil
}

// keyPath words a key's path for an error: dotted when every part is a
// plain name, else only the last (refused) part, so that no error quotes
// a file the playbook names.
func keyPath(parts []string) string {
	for _, p := range parts {
		for _, c := range p {
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return parts[len(parts)-1]
			}
		}
	}
	return strings.Join(parts, ".")
}

// SplitWTConfig splits a configuration string into its top-level keys
// and values, in order, as WiredTiger 3.2.1 reads it: a key without its
// quotes, a value as written (a quoted one with its quotes, a nested one
// with its brackets, "" for a key without a value).
func SplitWTConfig(cfg string) ([][2]string, error) {
	pairs, err := parseWTConfig(cfg)
	if err != nil {
		return nil, err
	}
	out := make([][2]string, len(pairs))
	for i, p := range pairs {
		v := p.value.text
		if p.value.kind == wtString {
			v = `"` + v + `"`
		}
		out[i] = [2]string{p.key.text, v}
	}
	return out, nil
}
