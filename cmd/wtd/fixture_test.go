package main

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// fixturePlaybook is a small real experiment: a load, then reads for a
// fixed time in two rounds with a restart between them (so counters reset),
// with print, io.write, log and report.table output.
const fixturePlaybook = `
local p = params{ docs = 3000, seconds = 2, gb = 0.25 }
local m = mongod.start{ cacheSizeGB = p.gb }
print("fixture", p.docs)
step{ name = "load", run = function() return m:load{ ns = "t.c", docs = p.docs, doc_bytes = 500 } end }
for round = 1, 2 do
  if round == 2 then m:restart{} end
  host.drop_caches()
  step{ name = "reads", round = round, run = function()
    return m:workload{ ns = "t.c", duration = p.seconds, mix = { read = 1 }, working_set = 1.0 }
  end }
  log("round", round, "done")
end
io.write("partial ", "line\n")
report.table{ by = "round", title = "fixture table" }
`

// fixtureRuns are three recorded runs of fixturePlaybook in one database:
// two with the same parameters (ids 1 and 2) and one shrunk (id 3).
type fixtureRuns struct {
	db       string
	playbook string
	stateDir string
}

// TestMain removes the fixture's directory when the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.db != "" {
		os.RemoveAll(filepath.Dir(fixture.db))
	}
	os.Exit(code)
}

var (
	fixtureOnce sync.Once
	fixture     fixtureRuns
	fixtureErr  string
)

// recordedRuns makes the fixture once per test process (about 20 s) and
// returns it; tests must not change its database (copyDB gives a copy).
func recordedRuns(t *testing.T) fixtureRuns {
	t.Helper()
	_, mm := binaries(t)
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wtd-fixture-")
		if err != nil {
			fixtureErr = err.Error()
			return
		}
		fixture = fixtureRuns{db: filepath.Join(dir, "wtd.db"), playbook: filepath.Join(dir, "fixture.lua"), stateDir: filepath.Join(dir, "state")}
		os.WriteFile(fixture.playbook, []byte(fixturePlaybook), 0o644)
		for _, extra := range [][]string{nil, nil, {"-p", "docs=2000", "-p", "seconds=1"}} {
			args := append([]string{"run", "--db", fixture.db, "--mongod", mm, "--sample-interval", "250ms", fixture.playbook}, extra...)
			res := runCLI(t, map[string]string{"WTD_STATE_DIR": fixture.stateDir}, args...)
			if res.code != 0 {
				fixtureErr = "fixture run failed: " + res.stderr
				return
			}
		}
	})
	if fixtureErr != "" {
		t.Fatal(fixtureErr)
	}
	return fixture
}

// copyDB copies the fixture's database for a test that changes it.
func copyDB(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "wtd.db")
	for _, suffix := range []string{"", "-wal"} {
		in, err := os.Open(src + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(dst + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		out.Close()
	}
	return dst
}
