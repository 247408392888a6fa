package testbin

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Server is a minimongod a test started.
type Server struct {
	URI  string
	Port int
	Cmd  *exec.Cmd
}

// StartMinimongod starts minimongod on port (0: a free one) on 127.0.0.1
// with a fresh dbpath and a 0.25 GB cache, then args, and waits until it
// accepts connections. It is killed when the test ends, or with the test
// binary.
func StartMinimongod(t testing.TB, port int, args ...string) *Server {
	t.Helper()
	bin := Minimongod(t)
	if port == 0 {
		port = FreePort(t)
	}
	full := append([]string{"--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--dbpath", t.TempDir(),
		"--wiredTigerCacheSizeGB", "0.25"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start minimongod: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("minimongod on port %d exited before accepting connections", port)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("minimongod on port %d: no connection within a minute: %v", port, err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	return &Server{URI: fmt.Sprintf("mongodb://%s", addr), Port: port, Cmd: cmd}
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	// Not hostctl.FreePort: hostctl's own tests use this package.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
