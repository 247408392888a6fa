package testbin

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
// binary. On a free port it tries three times (the port can be taken
// before minimongod binds it); a failure quotes the server's output.
func StartMinimongod(t testing.TB, port int, args ...string) *Server {
	t.Helper()
	bin := Minimongod(t)
	tries := 1
	if port == 0 {
		tries = 3
	}
	var err error
	for range tries {
		p := port
		if p == 0 {
			p = FreePort(t)
		}
		var s *Server
		if s, err = startOnce(t, bin, p, args); err == nil {
			return s
		}
	}
	t.Fatal(err)
	return nil
}

// startOnce starts minimongod on port and waits for it to accept
// connections.
func startOnce(t testing.TB, bin string, port int, args []string) (*Server, error) {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	full := append([]string{"--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--dbpath", dir,
		"--wiredTigerCacheSizeGB", "0.25"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start minimongod: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	kill := func() {
		cmd.Process.Kill()
		<-exited
	}
	output := func() string {
		b, _ := os.ReadFile(out.Name())
		return string(b)
	}
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
			return nil, fmt.Errorf("minimongod on port %d exited before accepting connections:\n%s", port, output())
		default:
		}
		if time.Now().After(deadline) {
			kill()
			return nil, fmt.Errorf("minimongod on port %d: no connection within a minute: %v\n%s", port, err, output())
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Cleanup(kill)
	return &Server{URI: fmt.Sprintf("mongodb://%s", addr), Port: port, Cmd: cmd}, nil
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
