package testbin

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
)

// OnFreePort tries again on a new port only while the start says its port
// was taken, and gives up after PortTries.
func TestOnFreePortRetriesOnlyPortInUse(t *testing.T) {
	other := errors.New("bad option")
	cases := []struct {
		name      string
		fails     []error // what the start returns, call by call; nil after
		wantCalls int
		wantErr   error
	}{
		{"first port works", nil, 1, nil},
		{"port taken once", []error{ErrPortInUse}, 2, nil},
		{"port taken every time", []error{ErrPortInUse, ErrPortInUse, ErrPortInUse, ErrPortInUse}, PortTries, ErrPortInUse},
		{"other failure is not retried", []error{fmt.Errorf("start: %w", other)}, 1, other},
		{"other failure after a taken port", []error{ErrPortInUse, other}, 2, other},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ports []int
			err := OnFreePort(t, func(port int) error {
				ports = append(ports, port)
				if i := len(ports) - 1; i < len(tc.fails) {
					return tc.fails[i]
				}
				return nil
			})
			if len(ports) != tc.wantCalls {
				t.Errorf("start called %d times (ports %v), want %d", len(ports), ports, tc.wantCalls)
			}
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("OnFreePort = %v, want %v", err, tc.wantErr)
			}
			for _, p := range ports {
				if p <= 0 || p > 65535 {
					t.Errorf("start got port %d", p)
				}
			}
		})
	}
}

// PortTaken recognises what minimongod really says and exits with when its
// port is held by another listener, and nothing else.
func TestPortTakenOnMinimongodsRefusal(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	cmd := exec.Command(Minimongod(t), "--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--dbpath", t.TempDir(),
		"--wiredTigerCacheSizeGB", "0.25")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("minimongod started on port %d held by another listener:\n%s", port, out)
	}
	if code := cmd.ProcessState.ExitCode(); !PortTaken(code, string(out)) {
		t.Errorf("PortTaken(%d, output) = false for minimongod on a held port:\n%s", code, out)
	}
	if PortTaken(100, string(out)) {
		t.Error("PortTaken(100, ...) = true: only exit code 48 is a network failure")
	}
	if PortTaken(48, "IPv6 address ::1 given without --ipv6") {
		t.Error("PortTaken(48, bind error without address in use) = true")
	}
}
