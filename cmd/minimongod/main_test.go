package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a buffer the server writes its log to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// minimongodArgs is a command line on an ephemeral port, in dbpath.
func minimongodArgs(dbpath string, more ...string) []string {
	return append([]string{"minimongod", "--port", "0", "--bind_ip", "127.0.0.1", "--dbpath", dbpath,
		"--wiredTigerCacheSizeGB", "0.25"}, more...)
}

// A --pprof address another listener holds is refused with exit code 2
// before the data directory is locked or WiredTiger opened: nothing is
// left behind that looks like an unclean shutdown.
func TestRunRefusesABusyPprofAddress(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dbpath := t.TempDir()
	var stdout, stderr syncBuffer
	code := run(minimongodArgs(dbpath, "--pprof", held.Addr().String()), "", &stdout, &stderr)
	if code != 2 {
		t.Fatalf("exit code %d, want 2\n%s%s", code, stdout.String(), stderr.String())
	}
	if want := "listen for --pprof on " + held.Addr().String(); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}
	for _, name := range []string{"mongod.lock", "WiredTiger"} {
		if _, err := os.Stat(filepath.Join(dbpath, name)); err == nil {
			t.Errorf("%s exists in the dbpath after the refusal", name)
		}
	}
}

// With --pprof the profiles are served while minimongod runs, and the
// listener is closed once it has shut down on SIGTERM.
func TestRunServesProfilesUntilShutdown(t *testing.T) {
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() { exited <- run(minimongodArgs(t.TempDir(), "--pprof", "127.0.0.1:0"), "", &stdout, &stderr) }()
	served := regexp.MustCompile(`"msg":"Serving Go profiles","attr":\{"address":"([0-9.:]+)"\}`)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stdout.String(), `"msg":"Waiting for connections"`) {
		select {
		case code := <-exited:
			t.Fatalf("minimongod exited with %d before waiting for connections\n%s%s", code, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("minimongod not waiting for connections within 60s\n%s", stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := served.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no address in the log line saying profiles are served:\n%s", stdout.String())
	}
	addr := m[1]
	resp, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatalf("profiles on %s while running: %v", addr, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET cmdline: status %d", resp.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit code %d after SIGTERM, want 0\n%s%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("minimongod still running 60s after SIGTERM\n%s", stdout.String())
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("profiles still accept connections on %s after shutdown", addr)
	}
	if strings.Contains(stdout.String(), `"s":"E"`) {
		t.Errorf("error logged:\n%s", stdout.String())
	}
}
