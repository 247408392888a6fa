package luabind

import (
	"os"
	"testing"
)

// TestWiredTigerSandbox runs testdata/wtsandbox_test.lua: every refusal
// names the key, and the two directories the refused strings name stay
// empty.
func TestWiredTigerSandbox(t *testing.T) {
	tr := newTestRun(t, withServer(t))
	logDir, statDir := t.TempDir(), t.TempDir()
	tr.mustRunFile(t, "wtsandbox_test.lua", tr.env(map[string]string{"logdir": logDir, "statdir": statDir}))
	for _, dir := range []string{logDir, statDir} {
		if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
			t.Errorf("%s holds %d entries (%v): a server wrote there", dir, len(entries), err)
		}
	}
}
