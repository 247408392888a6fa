package wtparse

import (
	"slices"
	"testing"

	"wtd/hostctl"
)

func openParser(t testing.TB) *Parser {
	t.Helper()
	p, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// samples are strings of every shape: quoted keys, ':' and '=', nesting,
// whitespace, outer brackets, unbalanced and bad characters.
var samples = []string{
	"", "a", "a=1", "a=1,b=2", " a = 1 , b = 2 ", "a:1", "a=b:c", "a=:b", "a=b=c", "a b", "a,,b", ",a",
	`"a"=1`, `"a"="b"`, `"a\"b"=1`, `"pa\u0074h"=1`, `"a`, `a="b`, `a="b\`, `""=1,b=2`, `"",b=2`,
	"a=(b=1,c=(d=2))", "a=[b,c]", "a={b=1}", "(a=1,b=2)", "(a=1)b", "a=1,(b=2)=3", "a=(b", "a=1)", ")", "(",
	"a.b=1", ".a=1", "/a=.b", `log=(enabled=true,"path"="/d")`, `"extensions"=["/x.so"]`, `log="path=/x"`, "log : [ path : /x ]",
	"a=b(c", "a=-1,b=10MB", "a=\t1\n", "a=\x01", "a=\x0b", "\"\xc3\xa9\"=1", "\"\xff\"=1", "a=\"\xe2\x82\"",
	"a=b\"c", "a=b[c]", "a=(\"x)\")", "a=(b=\"c,d\")", "a=[(b=1),(c=2)]",
}

func TestSplitReadsAsWiredTiger(t *testing.T) {
	p := openParser(t)
	for _, s := range samples {
		compare(t, p, s)
	}
}

func compare(t *testing.T, p *Parser, s string) {
	t.Helper()
	want, werr := p.Split(s)
	got, gerr := hostctl.SplitWTConfig(s)
	switch {
	case (werr == nil) != (gerr == nil):
		t.Errorf("%q: WiredTiger: %q, %v; wtd: %q, %v", s, want, werr, got, gerr)
	case werr == nil && !slices.Equal(got, want):
		t.Errorf("%q: WiredTiger reads %q, wtd %q", s, want, got)
	}
}

// FuzzSplitReadsAsWiredTiger holds hostctl's parser to WiredTiger's on
// random strings: the same pairs, or both fail.
func FuzzSplitReadsAsWiredTiger(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	p := openParser(f)
	f.Fuzz(func(t *testing.T, s string) {
		compare(t, p, s)
	})
}
