package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wtd/internal/testbin"
)

// With no daemon at --api, wtd schedules shows the --config file's
// schedules, read from the file (not an empty config).
func TestSchedulesWithoutADaemon(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pb.lua"), []byte("log('x')\n"), 0o644)
	cfg := fmt.Sprintf("listen: 127.0.0.1:%d\ndb: wtd.db\nschedules:\n  - name: nightly\n    cron: \"0 3 * * *\"\n    playbook: pb.lua\n",
		testbin.FreePort(t))
	path := filepath.Join(dir, "wtd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("http://127.0.0.1:%d", testbin.FreePort(t))
	for _, args := range [][]string{{"schedules", "--config", path}, {"schedules", "--api", api, "--config", path}} {
		r := runCLI(t, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "nightly") || !strings.Contains(r.stdout, "0 3 * * *") ||
			!strings.Contains(r.stderr, "showing the config alone") {
			t.Errorf("wtd %s: %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
