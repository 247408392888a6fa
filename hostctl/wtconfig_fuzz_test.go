package hostctl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// choices hands out small numbers from fuzzed bytes.
type choices struct {
	b []byte
	i int
}

func (c *choices) pick(n int) int {
	if len(c.b) == 0 {
		return 0
	}
	v := int(c.b[c.i%len(c.b)])
	c.i++
	return v % n
}

// refusedNames are wtRefused's keys, in order.
func refusedNames() []string {
	names := make([]string, 0, len(wtRefused))
	for n := range wtRefused {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// spellKey writes name in one of the spellings WiredTiger reads (bare or
// quoted, any letter case) or that wtd reads more widely (escapes);
// inQuotes writes it for the inside of a quoted string.
func spellKey(c *choices, name string, inQuotes bool) string {
	switch c.pick(3) {
	case 1:
		name = strings.ToUpper(name)
	case 2:
		b := []byte(name)
		for i := range b {
			if c.pick(2) == 1 && b[i] >= 'a' && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
		name = string(b)
	}
	quote := `"`
	if inQuotes {
		quote = `\"`
	}
	switch c.pick(4) {
	case 0, 1:
		return name
	case 2:
		return quote + name + quote
	default:
		if inQuotes {
			return quote + name + quote
		}
		return fmt.Sprintf(`"\u%04x%s"`, name[0], name[1:])
	}
}

// spellSep writes '=' or ':' with optional whitespace around it.
func spellSep(c *choices, inQuotes bool) string {
	space := []string{"", " ", "\t", "\n", "\r", "  "}
	if inQuotes {
		space = []string{"", " "} // a quoted string holds no control characters
	}
	return space[c.pick(len(space))] + []string{"=", ":"}[c.pick(2)] + space[c.pick(len(space))]
}

// spellValue writes a value none of the refused keys allows.
func spellValue(c *choices, inQuotes bool) string {
	quote := `"`
	if inQuotes {
		quote = `\"`
	}
	return []string{"/x", quote + "/x" + quote, "(a=1)", "[/x.so]", "{b=2}", "9"}[c.pick(6)]
}

// spellRefused writes a refused key with a value (or none), possibly
// under a parent key: dotted, in (...), [...], {...} or a quoted string.
func spellRefused(c *choices) string {
	names := refusedNames()
	name := names[c.pick(len(names))]
	parent := []string{"", "log", "statistics_log", "operation_tracking", "lsm", "chunk_cache", "zz"}[c.pick(7)]
	pair := func(inQuotes bool) string {
		s := spellKey(c, name, inQuotes)
		if c.pick(5) > 0 {
			s += spellSep(c, inQuotes) + spellValue(c, inQuotes)
		}
		return s
	}
	if parent == "" {
		return pair(false)
	}
	switch c.pick(6) {
	case 0:
		p := parent + "." + name
		if c.pick(2) == 1 {
			p = `"` + p + `"`
		}
		return p + spellSep(c, false) + spellValue(c, false)
	case 1:
		return parent + spellSep(c, false) + "(" + pair(false) + ")"
	case 2:
		return parent + spellSep(c, false) + "[" + pair(false) + "]"
	case 3:
		return parent + spellSep(c, false) + "{enabled=true," + pair(false) + "}"
	case 4:
		return parent + spellSep(c, false) + `"` + pair(true) + `"`
	default:
		return "zz=(" + parent + spellSep(c, false) + "(" + pair(false) + "))"
	}
}

// FuzzWTConfig feeds the checker random strings, and random strings with
// a refused key spelled at random at their start (alone or nested): the
// parser never panics, a string it allows splits without error, and a
// string that holds a refused key where WiredTiger would read it is
// always refused.
func FuzzWTConfig(f *testing.F) {
	for _, s := range []string{
		"", "eviction_target=60,eviction_trigger=80", "cache_size=300M,eviction=(threads_max=8)",
		`log=(enabled=true,"path"="/some/dir")`, `"extensions"=["/x.so"]`, "log.path=/x", `log="path=/x"`,
		"log : [ path : /x ]", "(log=(path=/x))", `lsm=(bloom_config="source=\"file:/x\"")`, "a=(b", "a=b=c", "\"\xff",
		"verbose=[evict,checkpoint]", `statistics_log=(sources=["file:a.wt"],timestamp="%b %d")`, ")(", "{[(\"",
	} {
		for i := 0; i < 4; i++ {
			f.Add(s, []byte{byte(i), byte(7 * i), byte(13 * i), 3, 1, 4, 1, 5})
		}
	}
	for i, n := range refusedNames() {
		f.Add(n+"=/x", []byte{byte(i), 2, 0, 1})
	}
	f.Fuzz(func(t *testing.T, context string, bits []byte) {
		err := CheckWTConfig(context)
		if _, serr := SplitWTConfig(context); err == nil && serr != nil {
			t.Fatalf("CheckWTConfig(%q) allows a string SplitWTConfig cannot read: %v", context, serr)
		}
		c := &choices{b: bits}
		refused := spellRefused(c)
		if err := CheckWTConfig(refused); !isRefusal(err) {
			t.Fatalf("CheckWTConfig(%q) = %v, want the key refused", refused, err)
		}
		for _, cfg := range []string{
			refused + "," + context,
			" " + refused + " , " + context,
			"yy=(" + refused + "," + context + ")",
			"(" + refused + "," + context + ")",
		} {
			if err := CheckWTConfig(cfg); err == nil {
				t.Fatalf("CheckWTConfig(%q) = nil, want a refusal (of %q)", cfg, refused)
			}
		}
	})
}

// isRefusal reports whether err refuses a key.
func isRefusal(err error) bool {
	var r *wtRefusedError
	return errors.As(err, &r)
}
