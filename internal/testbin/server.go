package testbin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/internal/freeport"
)

// Server is a minimongod a test started.
type Server struct {
	URI  string
	Port int
	Cmd  *exec.Cmd
}

// StartMinimongod starts minimongod on port (0: a free one, see
// OnFreePort) on 127.0.0.1 with a fresh dbpath (unless args give
// --dbpath) and a 0.25 GB cache, then args, and waits until it accepts connections. It is killed when the test
// ends, or with the test binary. A failure quotes the server's output.
func StartMinimongod(t testing.TB, port int, args ...string) *Server {
	t.Helper()
	bin := Minimongod(t)
	var s *Server
	startOn := func(p int) error {
		var err error
		s, err = startOnce(t, bin, p, args)
		return err
	}
	var err error
	if port != 0 {
		err = startOn(port)
	} else {
		err = OnFreePort(t, startOn)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	if slices.Contains(args, "--dbpath") {
		dir = "" // the caller's: a server started again on its data
	}
	full := []string{"--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--wiredTigerCacheSizeGB", "0.25"}
	if dir != "" {
		full = append(full, "--dbpath", dir)
	}
	full = append(full, args...)
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
			err := fmt.Errorf("minimongod on port %d exited with %d before accepting connections:\n%s", port, cmd.ProcessState.ExitCode(), output())
			if PortTaken(cmd.ProcessState.ExitCode(), output()) {
				err = fmt.Errorf("%w: %w", ErrPortInUse, err)
			}
			return nil, err
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

// FreePort returns a loopback TCP port that was free a moment ago
// (freeport.Loopback, the function wtd itself picks ports with).
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freeport.Loopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// PortTries is how many free ports OnFreePort tries.
const PortTries = 3

// ErrPortInUse marks a server start that failed because another process
// took the port first.
var ErrPortInUse = errors.New("port already in use")

// OnFreePort calls start with a free loopback port, and again on a new
// port while start's error is ErrPortInUse (another process can take a
// port between FreePort and the server binding it), PortTries times at
// most. It returns start's last error; any error but ErrPortInUse ends the
// tries at once.
func OnFreePort(t testing.TB, start func(port int) error) error {
	t.Helper()
	var err error
	for range PortTries {
		if err = start(FreePort(t)); !errors.Is(err, ErrPortInUse) {
			return err
		}
	}
	return fmt.Errorf("%d free ports tried: %w", PortTries, err)
}

// PortTaken reports whether a minimongod (or mongod) that exited with
// code, having written output, failed because its port was in use: exit
// code 48 (mongod's network error) and the kernel's "address already in
// use".
func PortTaken(code int, output string) bool {
	return code == 48 && strings.Contains(strings.ToLower(output), "address already in use")
}
