package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/internal/testbin"
)

func TestTermEscape(t *testing.T) {
	for _, tc := range []struct{ in, line, text string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`, `\x1b]0;title\x07`},
		{"\x1b[2J\r\x00\x7f", `\x1b[2J\r\x00\x7f`, `\x1b[2J\r\x00\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`, `c1 \u009b31m`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`},
		{"bad \xff\xc3 utf-8", `bad \xff\xc3 utf-8`, `bad \xff\xc3 utf-8`},
	} {
		if got := termLine(tc.in); got != tc.line {
			t.Errorf("termLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := termText(tc.in); got != tc.text {
			t.Errorf("termText(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

// escPlaybook writes terminal sequences everywhere a playbook's text can
// reach the operator: print and io.write, log, a parameter's default, a
// step's name and label, a step's error, a file name, the playbook's own
// error. \27 is ESC, \7 BEL, \226\128\174 U+202E (right-to-left override).
const escPlaybook = `
local p = params{ title = "t\27]0;pwned\7" }
print("title \27]0;pwned\7 clip \27]52;c;aGVsbG8=\7 clear \27[2J done")
print("two\nlines")
log("log \27[31mred\27[0m \226\128\174rtl")
io.write("carriage\rreturn\n")
step{ name = "step\27[2J", mode = "m\27]0;x\7", run = function() sleep(0.5) return 1 end }
pcall(step, { name = "bad", run = function() error("boom \27]52;c;aGk=\7") end })
local f = io.open("a\nb\27.txt", "w")
f:write("x")
f:close()
error("the end \27[2J")
`

// noRawControls fails when out holds a raw ESC, BEL, CR or U+202E.
func noRawControls(t *testing.T, what, out string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(out, c) {
			t.Errorf("%s holds a raw %q:\n%s", what, c, out)
		}
	}
}

// TestPlaybookTextReachesTheTerminalEscaped: what a playbook writes, and
// the names it gives, reach the terminal with their control characters
// escaped in wtd run, show, runs, samples and artifacts; --json keeps them
// raw, and the file keeps its name.
func TestPlaybookTextReachesTheTerminalEscaped(t *testing.T) {
	wtd := testbin.Wtd(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "wtd.db")
	pb := writePlaybook(t, escPlaybook)
	wtdRun := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(wtd, append(args, "--db", db)...)
		cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+filepath.Join(dir, "state"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		defer timer.Stop()
		if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
			t.Fatalf("wtd %v: %v", args, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}

	stdout, stderr, code := wtdRun("run", "--sample-interval", "100ms", pb)
	if code != 1 {
		t.Fatalf("wtd run: exit %d, want 1 (the playbook's error)\n%s%s", code, stdout, stderr)
	}
	noRawControls(t, "wtd run's output", stdout+stderr)
	for _, want := range []string{`title \x1b]0;pwned\x07 clip \x1b]52;c;aGVsbG8=\x07 clear \x1b[2J done`,
		"two\nlines\n", `log \x1b[31mred\x1b[0m \u202ertl`, `carriage\rreturn`,
		`step\x1b[2J (mode=m\x1b]0;x\x07) started`, `pb.lua:8: boom \x1b]52;c;aGk=\x07`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("wtd run's output lacks %q:\n%s", want, stdout)
		}
	}
	if want := `pb.lua:12: the end \x1b[2J`; !strings.Contains(stderr, want) {
		t.Errorf("wtd run's errors lack %q:\n%s", want, stderr)
	}

	show, stderr, code := wtdRun("show", "latest")
	if code != 0 {
		t.Fatalf("wtd show latest: exit %d\n%s", code, stderr)
	}
	noRawControls(t, "wtd show", show)
	for _, want := range []string{"  params:    title=t\\x1b]0;pwned\\x07\n", "  files:     a\\nb\\x1b.txt, 1 bytes\n",
		"\nstep 1  step\\x1b[2J  ok", "pb.lua:8: boom \\x1b]52;c;aGk=\\x07\n", `title \x1b]0;pwned\x07 clip`} {
		if !strings.Contains(show, want) {
			t.Errorf("wtd show lacks %q:\n%s", want, show)
		}
	}

	js, stderr, code := wtdRun("show", "latest", "--json")
	var doc struct {
		Run struct {
			Params map[string]any `json:"params"`
		} `json:"run"`
		Files  []struct{ Path string }    `json:"files"`
		Steps  []struct{ Name string }    `json:"steps"`
		Output []struct{ Message string } `json:"output"`
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
		t.Fatalf("wtd show --json: exit %d, %v\n%s%s", code, err, js, stderr)
	}
	if doc.Run.Params["title"] != "t\x1b]0;pwned\x07" || len(doc.Files) != 1 || doc.Files[0].Path != "a\nb\x1b.txt" ||
		len(doc.Steps) != 2 || doc.Steps[0].Name != "step\x1b[2J" {
		t.Errorf("--json does not keep the raw text: params %q, files %+v, steps %+v", doc.Run.Params, doc.Files, doc.Steps)
	}
	raw := false
	for _, o := range doc.Output {
		raw = raw || o.Message == "title \x1b]0;pwned\x07 clip \x1b]52;c;aGVsbG8=\x07 clear \x1b[2J done"
	}
	if !raw {
		t.Errorf("--json output lacks the raw print line: %+v", doc.Output)
	}

	runs, _, _ := wtdRun("runs")
	noRawControls(t, "wtd runs", runs)
	if !strings.Contains(runs, `title=t\x1b]0;pwned\x07`) {
		t.Errorf("wtd runs lacks the escaped parameter:\n%s", runs)
	}

	csv, stderr, code := wtdRun("samples", "latest", "--source", "host", "--metric", "cpu.user")
	noRawControls(t, "wtd samples", csv)
	if want := `,1,step\x1b[2J (mode=m\x1b]0;x\x07),`; code != 0 || !strings.Contains(csv, want) {
		t.Errorf("wtd samples: exit %d, want a row of step 1 named %q:\n%s%s", code, want, csv, stderr)
	}

	outDir := filepath.Join(dir, "files")
	arts, stderr, code := wtdRun("artifacts", "latest", "-o", outDir)
	if code != 0 {
		t.Fatalf("wtd artifacts latest: exit %d\n%s", code, stderr)
	}
	noRawControls(t, "wtd artifacts", arts)
	if want := filepath.Join(outDir, `a\nb\x1b.txt`) + "\n"; arts != want {
		t.Errorf("wtd artifacts printed %q, want %q", arts, want)
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "a\nb\x1b.txt")); err != nil || string(b) != "x" {
		t.Errorf("the file under its own name: %q, %v", b, err)
	}
}
