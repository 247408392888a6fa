// Package itest holds minimongod's integration tests: real minimongod
// processes on free loopback ports in temp dirs, driven with the Go driver.
package itest

import (
	"bytes"
	"context"
	"errors"
	"flag"
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

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbin"
)

var mmBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "minimongod-itest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mmBinary = filepath.Join(dir, "minimongod")
	out, err := exec.Command("go", "build", "-o", mmBinary, "wtd/cmd/minimongod").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build minimongod: %v\n%s", err, out)
		os.Exit(1)
	}
	// The tests that call t.Parallel mostly wait on servers starting,
	// syncing and stopping rather than use CPU: run four at a time unless
	// -parallel says otherwise.
	flag.Parse()
	parallelGiven := false
	flag.Visit(func(f *flag.Flag) { parallelGiven = parallelGiven || f.Name == "test.parallel" })
	if !parallelGiven {
		if err := flag.Set("test.parallel", "4"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running minimongod process.
type server struct {
	t   testing.TB
	cmd *exec.Cmd
	// port is where clients connect: a proxy that checks every reply
	// (replyChecker) in front of minimongod's own port, mmPort.
	port   int
	mmPort int
	dbpath string
	log    *serverLog
	client *mongo.Client
	done   chan struct{}
	args   []string
}

// start runs minimongod on a free port with a fresh dbpath (unless args
// give --dbpath) and waits until it answers.
func start(t testing.TB, args ...string) *server {
	t.Helper()
	dbpath := t.TempDir()
	return startAt(t, dbpath, args...)
}

func startAt(t testing.TB, dbpath string, args ...string) *server {
	t.Helper()
	return startWrapped(t, dbpath, nil, args...)
}

// startWrapped starts minimongod through wrapper: its command line is
// appended to wrapper's last argument (a shell script that prepares
// something and ends with exec). It runs on a free port, on another one
// when that was taken before minimongod bound it (testbin.OnFreePort).
func startWrapped(t testing.TB, dbpath string, wrapper []string, args ...string) *server {
	t.Helper()
	var s *server
	err := testbin.OnFreePort(t, func(port int) error {
		var err error
		s, err = launch(t, port, dbpath, wrapper, args)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Clients reach the server through a proxy that checks every reply.
	s.mmPort = s.port
	checker := startReplyChecker(t, "127.0.0.1:"+strconv.Itoa(s.mmPort))
	s.port = checker.port()
	t.Cleanup(func() {
		if bad := checker.close(); len(bad) > 0 {
			t.Errorf("minimongod sent %d malformed replies: %v", len(bad), bad)
		}
	})
	s.client = s.connect()
	return s
}

// launch starts minimongod (through wrapper) on port and waits until it
// has bound the port and logged that it waits for connections. An exit
// because the port was taken is testbin.ErrPortInUse; any other failure
// ends the test.
func launch(t testing.TB, port int, dbpath string, wrapper, args []string) (*server, error) {
	t.Helper()
	s := &server{t: t, port: port, dbpath: dbpath, log: newServerLog(t), done: make(chan struct{}), args: args}
	full := []string{mmBinary, "--port", strconv.Itoa(port), "--dbpath", dbpath}
	if !slices.Contains(args, "--bind_ip") {
		full = append(full, "--bind_ip", "127.0.0.1")
	}
	full = append(full, args...)
	if len(wrapper) > 0 {
		w := append([]string(nil), wrapper...)
		w[len(w)-1] += " " + strings.Join(full, " ")
		full = w
	}
	s.cmd = exec.Command(full[0], full[1:]...)
	s.cmd.Stdout = s.log.f
	s.cmd.Stderr = s.log.f
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.kill)
	// Not a dial: when the port was taken, the other process answers it.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(s.log.String(), `"msg":"Waiting for connections"`) {
		select {
		case <-s.done:
			code, out := s.cmd.ProcessState.ExitCode(), s.log.String()
			if testbin.PortTaken(code, out) {
				return nil, fmt.Errorf("minimongod on port %d: %w\n%s", port, testbin.ErrPortInUse, out)
			}
			t.Fatalf("minimongod on port %d exited with %d before waiting for connections:\n%s", port, code, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("minimongod on port %d not waiting for connections within 30s\n%s", port, s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, nil
}

func (s *server) uri() string {
	return fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", s.port)
}

func (s *server) connect() *mongo.Client {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.t.Fatalf("minimongod exited at start: %v\n%s", s.cmd.ProcessState, s.log.String())
		default:
		}
		// Until minimongod listens a driver that tried waits half a second
		// (its heartbeat) before it tries again: wait for the port first.
		if !s.listening() {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// The client is the test's: its server selection timeout bounds
		// every operation's wait for a connection too, which takes
		// seconds on a busy machine when many open at once (the hello
		// below has its own 2 s).
		c, err := mongo.Connect(options.Client().ApplyURI(s.uri()).SetServerSelectionTimeout(30 * time.Second))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = c.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Err()
			cancel()
			if err == nil {
				s.t.Cleanup(func() { s.disconnect(c) })
				return c
			}
			c.Disconnect(context.Background())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("minimongod did not answer hello within 30s\n%s", s.log.String())
	return nil
}

// disconnect closes a client of s. Closing ends the client's sessions on
// the server first, which waits for the server up to the client's
// selection timeout (30 s): a server already gone (killed by the test) is
// not waited for.
func (s *server) disconnect(c *mongo.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case <-s.done:
		cancel()
	default:
	}
	c.Disconnect(ctx)
}

// listening reports whether minimongod's own port (behind the reply
// checker, when there is one) has a listening socket, from the kernel's
// table of TCP sockets: connecting to find out would show in the
// server's connection counts.
func (s *server) listening() bool {
	port := s.mmPort
	if port == 0 {
		port = s.port
	}
	want := fmt.Sprintf(":%04X ", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			// sl local_address rem_address st ...; st 0A is LISTEN.
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1]+" ", want) && f[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() {
	s.t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("minimongod did not stop within 60s\n%s", s.log.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		s.t.Fatalf("minimongod exited with %d\n%s", code, s.log.String())
	}
}

func (s *server) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

func (s *server) db(name string) *mongo.Database { return s.client.Database(name) }

func (s *server) run(t testing.TB, db string, cmd bson.D) bson.M {
	t.Helper()
	raw, err := s.client.Database(db).RunCommand(context.Background(), cmd).Raw()
	if err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	return toM(t, raw)
}

// runErr runs a command that must fail and returns the server error.
func (s *server) runErr(t testing.TB, db string, cmd bson.D) mongo.CommandError {
	t.Helper()
	err := s.client.Database(db).RunCommand(context.Background(), cmd).Err()
	var ce mongo.CommandError
	if err == nil {
		t.Fatalf("%v succeeded, want an error", cmd)
	}
	if !errorsAs(err, &ce) {
		t.Fatalf("%v: %T %v, want a command error", cmd, err, err)
	}
	return ce
}

// toM decodes raw with nested documents as bson.M.
func toM(t testing.TB, raw bson.Raw) bson.M {
	t.Helper()
	dec := bson.NewDecoder(bson.NewDocumentReader(bytes.NewReader(raw)))
	dec.DefaultDocumentM()
	var out bson.M
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// launch on a port another listener holds reports testbin.ErrPortInUse,
// the one failure startWrapped tries another port for.
func TestLaunchOnATakenPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	s, err := launch(t, port, t.TempDir(), nil, []string{"--wiredTigerCacheSizeGB", "0.25"})
	if !errors.Is(err, testbin.ErrPortInUse) {
		t.Fatalf("launch on held port %d = %v, %v; want testbin.ErrPortInUse", port, s, err)
	}
}
