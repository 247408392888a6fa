package itest

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/minimongod/sysmon"
)

// godebugOf returns the GODEBUG the process pid was started with.
func godebugOf(t *testing.T, pid int) string {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), "GODEBUG="); ok {
			return v
		}
	}
	return ""
}

// minimongod re-executes itself with Go's scheduler monitor kept awake:
// the same process (the pid its starter knows answers serverStatus) under
// the name it was started by (through a link named mongod too), one
// startup, the setting in its environment and said in its log; a GODEBUG
// of the user's is kept, and one that names schedtrace itself wins (a
// period keeps the monitor awake too, 0 lets it sleep).
func TestSchedulerMonitorKeptAwake(t *testing.T) {
	t.Parallel()
	// viaLink starts the command line appended to it through a link
	// named mongod in dir.
	viaLink := func(dir string) string {
		return `run() { ln -s "$1" ` + dir + `/mongod && shift && exec ` + dir + `/mongod "$@"; }; run`
	}
	cases := []struct {
		name, env, wantGodebug, wantLog string
		link                            bool
	}{
		{"default", "", sysmon.Setting, `"id":4700101`, false},
		{"user GODEBUG kept", "GODEBUG=madvdontneed=1", "madvdontneed=1," + sysmon.Setting, `"id":4700101`, false},
		{"schedtrace=0 opts out", "GODEBUG=schedtrace=0", "schedtrace=0", `GODEBUG sets schedtrace=0`, false},
		{"a user's period is kept", "GODEBUG=schedtrace=3600000", "schedtrace=3600000", `"id":4700101`, false},
		{"started through a link", "", sysmon.Setting, `"id":4700101`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			script, wantName := c.env+" exec", "minimongod"
			if c.link {
				script, wantName = viaLink(t.TempDir()), "mongod"
			}
			s := startWrapped(t, t.TempDir(), []string{"sh", "-c", script})
			pid := s.cmd.Process.Pid
			st := s.run(t, "admin", bson.D{{Key: "serverStatus", Value: 1}})
			if got := fmt.Sprint(st["pid"]); got != fmt.Sprint(pid) {
				t.Errorf("serverStatus pid %s, want the started process %d", got, pid)
			}
			if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(comm)) != wantName {
				t.Errorf("process name %q (%v), want %s", comm, err, wantName)
			}
			if got := godebugOf(t, pid); got != c.wantGodebug {
				t.Errorf("GODEBUG %q, want %q", got, c.wantGodebug)
			}
			log := s.log.String()
			if !containsLine(log, c.wantLog) {
				t.Errorf("no log line with %s:\n%s", c.wantLog, log)
			}
			if n := strings.Count(log, "MongoDB starting"); n != 1 {
				t.Errorf("%d startup lines, want 1:\n%s", n, log)
			}
		})
	}
}
