package luabind

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"wtd/engine"
)

// TestPathologicalPatternStopsTheRun: a pattern that backtracks without
// end fails the playbook within its budget with an error naming the line,
// and stops the run, so that a pcall cannot go on past it.
func TestPathologicalPatternStopsTheRun(t *testing.T) {
	// Alone, each of these matches runs for about a second on this
	// machine's cores; the budget is a tenth of that.
	const subject = `local s = string.rep("a", 150)` + "\n"
	for _, tc := range []struct{ name, src, want string }{
		{"find", subject + `print(string.find(s, ".-.-.-b"))`, `inline.lua:2: string.find: pattern ".-.-.-b" on a 150-byte string matched for more than 200ms`},
		{"method", subject + `local x = 1` + "\n" + `print(s:match(".-.-.-b"))`, `inline.lua:3: string.match: pattern ".-.-.-b"`},
		{"gmatch", subject + `for w in s:gmatch(".-.-.-b") do end`, `inline.lua:2: string.gmatch: pattern ".-.-.-b"`},
		{"gsub", subject + `s:gsub(".-.-.-b", "x")`, `inline.lua:2: string.gsub: pattern ".-.-.-b"`},
		{"pcall", subject + `local ok, err = pcall(string.find, s, ".-.-.-b")` + "\n" + `log("went on", err)` + "\nsleep(5)\n", "inline.lua:2: string.find: pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRun(t)
			env := tr.env(nil)
			env.PatternBudget = 200 * time.Millisecond
			done := make(chan error, 1)
			start := time.Now()
			go func() {
				_, err := RunPlaybook(tr.run.Context(), "inline.lua", tc.src, env)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("the playbook still runs 30 s after it started")
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("the playbook ended %s after its start, want about 200 ms", took)
			}
			wantContains(t, err, tc.want)
			var le *engine.LimitError
			if !errors.As(context.Cause(tr.run.Context()), &le) || !strings.HasPrefix(le.Msg, "inline.lua:") {
				t.Errorf("the run's cause is %v, want the pattern's *engine.LimitError naming the line", context.Cause(tr.run.Context()))
			}
		})
	}
}

// TestPatternFunctionsKeepTheirResults: the guarded pattern functions give
// what gopher-lua's give, captures, positions, init, plain and errors
// included.
func TestPatternFunctionsKeepTheirResults(t *testing.T) {
	tr := newTestRun(t)
	src := `
print(string.find("hello world", "o w"))
print(string.find("hello world", "l+", 5))
print(string.find("a.b", ".", 1, true))
print(string.find("abc", ""))
print(string.find("key=val", "(%w+)=(%w+)"))
print(("key=val"):match("(%w+)=()"))
print(string.match("  x  ", "^%s*(.-)%s*$"), string.match("abc", "b", -2))
local n = 0
for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do n = n + 1; io.write(k, v, ";") end
print(n)
print(string.gsub("hello world", "o", "0", 1))
print(string.gsub("abc", "%w", function(c) return c:upper() .. "." end))
print(string.gsub("$x $y", "%$(%w+)", { x = "1" }))
print(string.rep("ab", 3), string.rep("x", 0), string.rep("x", -1) == "")
print(pcall(string.find, "x", "[a"))
`
	if _, err := RunPlaybook(context.Background(), "inline.lua", src, tr.env(nil)); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"5\t7", "10\t10", "2\t2", "1\t0", "1\t7\tkey\tval", "key\t5", "x\tb",
		"a1;b2;2", "hell0 world\t1", "A.B.C.\t3", "1 $y\t2", "ababab\t\ttrue",
		"false\tinline.lua:16: string.find: pattern \"[a\": ",
	}, "\n")
	if got := tr.out.String(); !strings.HasPrefix(got, want) {
		t.Errorf("output:\n%s\nwant it to start with:\n%s", got, want)
	}
}

// TestStringRepIsCapped: string.rep refuses a result over Env.MaxString,
// naming the line, before it allocates it.
func TestStringRepIsCapped(t *testing.T) {
	tr := newTestRun(t)
	env := tr.env(nil)
	env.MaxString = 64 << 20
	_, err := RunPlaybook(context.Background(), "inline.lua", "local ok = string.rep('x', 1000)\nlocal big = string.rep('xy', 40 * 1024 * 1024)\n", env)
	wantPrefix(t, err, "inline.lua:2: string.rep: the result would be 80 MiB, more than 64 MiB, the most one string may take")
}
