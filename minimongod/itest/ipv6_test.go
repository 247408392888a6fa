package itest

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"wtd/internal/testbin"
)

// An IPv6 address is bound only with --ipv6, as in mongod; an IPv4
// listener does not accept IPv6 clients.
func TestBindIPv6OnlyWithIPv6(t *testing.T) {
	t.Parallel()
	port := testbin.FreePort(t)
	out, err := exec.Command(mmBinary, "--port", strconv.Itoa(port), "--bind_ip", "::1", "--dbpath", t.TempDir()).CombinedOutput()
	if code := exitCode(err); code != 48 {
		t.Errorf("--bind_ip ::1 without --ipv6 exited %d, want 48\n%s", code, out)
	}
	s := start(t, "--bind_ip", "127.0.0.1,::1", "--ipv6")
	c, err := net.DialTimeout("tcp", net.JoinHostPort("::1", strconv.Itoa(s.mmPort)), 2*time.Second)
	if err != nil {
		t.Fatalf("dial [::1] with --ipv6: %v", err)
	}
	noErr(t, c.Close())
	v4 := start(t)
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("::1", strconv.Itoa(v4.mmPort)), 2*time.Second); err == nil {
		noErr(t, c.Close())
		t.Errorf("an IPv4-only server accepted an IPv6 connection")
	}
}

// exitCode returns a finished command's exit code (0 for nil).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
