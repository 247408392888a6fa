package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleConfigChecks: deploy/wtd.example.yaml, beside the shipped
// playbooks, passes wtd daemon --check as shipped, with its example
// schedules and windows switched off (installed as written, the daemon
// fires nothing and changes no server), and with them switched on as its
// comment says (the '#' in column 1 of their lines removed).
func TestExampleConfigChecks(t *testing.T) {
	b, err := os.ReadFile("../../deploy/wtd.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	check := func(text string) cliResult {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "wtd.yaml"), []byte(text), 0o644)
		abs, _ := filepath.Abs("../../playbooks")
		os.Symlink(abs, filepath.Join(dir, "playbooks"))
		return runCLI(t, nil, "daemon", "--check", "--config", filepath.Join(dir, "wtd.yaml"))
	}
	shipped := string(b)
	if res := check(shipped); res.code != 0 || strings.Contains(res.stdout, "schedule ") || strings.Contains(res.stdout, "window ") {
		t.Errorf("check as shipped: %d, want no schedule and no window\n%s%s", res.code, res.stdout, res.stderr)
	}
	_, example, ok := strings.Cut(shipped, "\n#schedules:\n")
	if !ok {
		t.Fatal("the example config has no #schedules: block")
	}
	var on []string
	for _, l := range strings.Split("#schedules:\n"+example, "\n") {
		on = append(on, strings.TrimPrefix(l, "#"))
	}
	before, _, _ := strings.Cut(shipped, "\n#schedules:\n")
	res := check(before + "\n" + strings.Join(on, "\n"))
	if res.code != 0 || !strings.Contains(res.stdout, "schedule nightly-cache-sweep") || !strings.Contains(res.stdout, "window offpeak-ttl") {
		t.Errorf("check with the examples switched on: %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestSystemdUnitVerifies runs systemd-analyze verify on deploy/wtd.service
// (its ExecStart pointed at a built wtd), where systemd-analyze exists.
func TestSystemdUnitVerifies(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit is not verified here")
	}
	unit, err := os.ReadFile("../../deploy/wtd.service")
	if err != nil {
		t.Fatal(err)
	}
	wtd, _ := binaries(t)
	text := strings.ReplaceAll(string(unit), "/usr/local/bin/wtd", wtd)
	if !strings.Contains(string(unit), "ExecReload=/bin/kill -HUP $MAINPID") || !strings.Contains(string(unit), "StateDirectory=wtd") {
		t.Error("the unit lacks ExecReload or StateDirectory")
	}
	path := filepath.Join(t.TempDir(), "wtd.service")
	os.WriteFile(path, []byte(text), 0o644)
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || strings.Contains(string(out), "wtd.service") {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
