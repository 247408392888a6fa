package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerBinarySearchOrder: --mongod, then $WTD_MONGOD, then mongod on
// PATH, then minimongod next to wtd, then minimongod on PATH.
func TestServerBinarySearchOrder(t *testing.T) {
	wtdBin, _ := binaries(t)
	root := t.TempDir()
	exe := func(path string) string {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	self := filepath.Join(root, "bin", "wtd")
	b, err := os.ReadFile(wtdBin)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(self), 0o755)
	if err := os.WriteFile(self, b, 0o755); err != nil {
		t.Fatal(err)
	}
	flag := exe(filepath.Join(root, "flag", "mongod"))
	envBin := exe(filepath.Join(root, "env", "mongod"))
	pathMongod := exe(filepath.Join(root, "pathmongod", "mongod"))
	beside := filepath.Join(root, "bin", "minimongod")
	pathMini := exe(filepath.Join(root, "pathmini", "minimongod"))
	// A playbook that names mongod.start, whose start is never reached.
	pb := writePlaybook(t, "if false then mongod.start{} end\nlog('x')\n")

	for _, tc := range []struct {
		name   string
		flag   string
		env    string
		path   []string
		beside bool
		want   string
	}{
		{"flag first", flag, envBin, []string{filepath.Dir(pathMongod), filepath.Dir(pathMini)}, true, flag + " (--mongod)"},
		{"then $WTD_MONGOD", "", envBin, []string{filepath.Dir(pathMongod), filepath.Dir(pathMini)}, true, envBin + " ($WTD_MONGOD)"},
		{"then mongod on PATH", "", "", []string{filepath.Dir(pathMongod), filepath.Dir(pathMini)}, true, pathMongod + " (mongod on PATH)"},
		{"then minimongod next to wtd", "", "", []string{filepath.Dir(pathMini)}, true, beside + " (minimongod next to wtd)"},
		{"then minimongod on PATH", "", "", []string{filepath.Dir(pathMini)}, false, pathMini + " (minimongod on PATH)"},
		{"none", "", "", nil, false, "no server binary found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(beside)
			if tc.beside {
				exe(beside)
			}
			args := []string{"run", "--db", filepath.Join(t.TempDir(), "wtd.db")}
			if tc.flag != "" {
				args = append(args, "--mongod", tc.flag)
			}
			cmd := exec.Command(self, append(args, pb)...)
			cmd.Env = []string{"PATH=" + strings.Join(tc.path, ":"), "HOME=" + t.TempDir(), "WTD_STATE_DIR=" + t.TempDir()}
			if tc.env != "" {
				cmd.Env = append(cmd.Env, "WTD_MONGOD="+tc.env)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := "wtd: mongod.start runs " + tc.want
			if tc.name == "none" {
				want = "wtd: no server binary found"
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("want %q in:\n%s", want, out)
			}
		})
	}
}

// TestSamplesMatch: --match lists the recorded metric names that contain
// the text, and only those.
func TestSamplesMatch(t *testing.T) {
	_, mm := binaries(t)
	db := filepath.Join(t.TempDir(), "wtd.db")
	pb := writePlaybook(t, "local m = mongod.start{}\nsleep(0.5)\n")
	if res := runCLI(t, nil, "run", "--db", db, "--mongod", mm, "--sample-interval", "100ms", pb); res.code != 0 {
		t.Fatalf("run: %d\n%s", res.code, res.stderr)
	}
	res := runCLI(t, nil, "samples", "--db", db, "1", "--match", "cache.bytes currently")
	if res.code != 0 {
		t.Fatalf("samples: %d\n%s", res.code, res.stderr)
	}
	names := strings.Split(strings.TrimSpace(res.stdout), "\n")
	found := false
	for _, n := range names {
		if !strings.Contains(strings.ToLower(n), "cache.bytes currently") {
			t.Errorf("%q does not match", n)
		}
		found = found || n == "wiredTiger.cache.bytes currently in the cache"
	}
	if !found {
		t.Errorf("wiredTiger.cache.bytes currently in the cache not listed: %q", names)
	}
	all := runCLI(t, nil, "samples", "--db", db, "1")
	if n := len(strings.Split(strings.TrimSpace(all.stdout), "\n")); n < 100 || n <= len(names) {
		t.Errorf("without --match %d names, with it %d", n, len(names))
	}
}

// TestUsageErrors: bad flags and arguments exit 2 with a message naming
// the problem, and record nothing.
func TestUsageErrors(t *testing.T) {
	// A playbook that names mongod.start, whose start is never reached.
	pb := writePlaybook(t, "if false then mongod.start{} end\nlog('x')\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--sample-interval", "-1s", pb}, "--sample-interval -1s: must be 0 (off) or positive"},
		{[]string{"run", "--sample-interval", "often", pb}, `invalid argument "often" for "--sample-interval"`},
		{[]string{"run", "--frobnicate", pb}, "unknown flag: --frobnicate"},
		{[]string{"run"}, "accepts 1 arg(s), received 0"},
		{[]string{"run", pb, "-p", "novalue"}, `-p "novalue": want name=value`},
		{[]string{"run", pb, "-p", "a=1", "-p", "a=2"}, "-p a given twice"},
		{[]string{"runs", "--limit", "many"}, `invalid argument "many" for "--limit"`},
	} {
		db := filepath.Join(t.TempDir(), "wtd.db")
		res := runCLI(t, nil, append(tc.args, "--db", db)...)
		if res.code != 2 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, res.code, tc.want, res.stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("%v created the database", tc.args)
		}
	}
	db := filepath.Join(t.TempDir(), "wtd.db")
	openDB(t, db)
	if res := runCLI(t, nil, "show", "--db", db, "first"); res.code != 2 || !strings.Contains(res.stderr, `run "first": want a run id, latest or latest:PLAYBOOK`) {
		t.Errorf("show first: exit %d\n%s", res.code, res.stderr)
	}
}

// wtd names the server binary mongod.start runs only for a playbook that
// may start one: not for one that only connects to a running server.
func TestServerBinaryNamedOnlyWhenItMayRun(t *testing.T) {
	_, mm := binaries(t)
	for _, c := range []struct {
		text string
		says bool
	}{
		{"log('x')\n", false},
		{"local ok = pcall(mongod.connect, { uri = 'mongodb://127.0.0.1:1', timeout = 0.2 })\n", false},
		{"if false then mongod.start{} end\n", true},
		{"if false then mongod . start { } end\n", true},
		{"if false then local f = mongod['st'..'art'] end\n", true},
		{"if false then local g = _G end\n", true},
	} {
		pb := writePlaybook(t, c.text)
		res := runCLI(t, nil, "run", "--db", filepath.Join(t.TempDir(), "wtd.db"), "--mongod", mm, pb)
		if res.code != 0 {
			t.Fatalf("%q: exit %d\n%s", c.text, res.code, res.stderr)
		}
		if says := strings.Contains(res.stderr, "wtd: mongod.start runs "+mm); says != c.says {
			t.Errorf("%q: names the binary %v, want %v\n%s", c.text, says, c.says, res.stderr)
		}
	}
}
