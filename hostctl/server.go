package hostctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sys/unix"

	"wtd/internal/freeport"
)

// StartOptions tunes how Start waits for a server and how Stop ends it.
// Zero fields take the defaults.
type StartOptions struct {
	// StartTimeout bounds the wait for hello to answer; default 60 s.
	StartTimeout time.Duration
	// PollInterval is the pause between hello attempts; default 75 ms.
	PollInterval time.Duration
	// StopTimeout is how long Stop waits after the shutdown command before
	// SIGTERM, and again after SIGTERM before SIGKILL; default 30 s.
	StopTimeout time.Duration
	// Env adds KEY=VALUE entries to the server's environment.
	Env []string
	// Dialer opens the driver's connections to the server; nil means
	// LoopbackDialer.
	Dialer options.ContextDialer
	// Owner is who started the server (wtd's run): StopOwned(ctx, Owner)
	// stops its servers and no other's, so two runs in one process (the
	// tests run wtd in-process) never stop each other's.
	Owner any
}

func (o StartOptions) withDefaults() StartOptions {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 75 * time.Millisecond
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 30 * time.Second
	}
	return o
}

// Server is a mongod that this process started. Its methods are safe for
// concurrent use. After Restart the same Server stands for the new process.
type Server struct {
	opts StartOptions

	opMu sync.Mutex // serialises Stop and Restart
	mu   sync.Mutex // guards cur
	cur  *process
}

// process is one run of the server binary.
type process struct {
	spec    ServerSpec
	cmd     *exec.Cmd
	tail    *logTail
	logFile *os.File
	client  *mongo.Client

	exited   chan struct{} // closed once the process has been reaped
	state    *os.ProcessState
	exitedAt time.Time   // when it was reaped (set before exited is closed)
	stopping atomic.Bool // Stop was called: an exit is not a crash
}

// Start starts spec.Binary with spec.Args(), its stdout and stderr
// appended to spec.LogPath (default <dbpath>/mongod.log), and waits until
// hello answers. The server runs in its own process group and gets SIGKILL
// if this process dies. On an early exit, a timeout or a cancelled ctx the
// server is killed and the error quotes its exit status and the message and
// attributes of its last error-level log line (its last lines when it has
// none).
// ctx bounds only the start: it does not stop a server that came up.
//
// Pdeathsig is tied to the OS thread that forked the server; Go keeps its
// threads for the life of the process unless a goroutine exits while
// locked to one, so wtd must not start servers from such goroutines.
func Start(ctx context.Context, spec ServerSpec, opts StartOptions) (*Server, error) {
	s := &Server{opts: opts.withDefaults()}
	p, err := launch(ctx, spec, s.opts)
	if err != nil {
		return nil, err
	}
	s.cur = p
	register(s)
	return s, nil
}

func launch(ctx context.Context, spec ServerSpec, opts StartOptions) (*process, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("start mongod: %w", err)
	}
	if spec.BindIP == "" {
		spec.BindIP = DefaultBindIP
	}
	if spec.Port == 0 {
		port, err := freeport.Loopback(ctx)
		if err != nil {
			return nil, fmt.Errorf("start mongod: %w", err)
		}
		spec.Port = port
	}
	if err := os.MkdirAll(spec.DBPath, 0o755); err != nil {
		return nil, fmt.Errorf("start mongod: create dbpath: %w", err)
	}
	logPath := spec.logPath()
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("start mongod: create log directory: %w", err)
	}
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start mongod: open log: %w", err)
	}
	p := &process{spec: spec, logFile: lf, tail: newLogTail(lf, logTailLines), exited: make(chan struct{})}
	p.cmd = exec.Command(spec.Binary, spec.Args()...)
	p.cmd.Stdout, p.cmd.Stderr = p.tail, p.tail
	p.cmd.Env = append(os.Environ(), opts.Env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start mongod: %w", err)
	}
	// The reaper is owned by the process: it ends when the server exits,
	// which Stop and every failure path below make sure of.
	go p.reap()

	copts, err := ClientOptions(p.uri(), ConnectOptions{Timeout: 2 * time.Second, Dialer: opts.Dialer})
	if err == nil {
		p.client, err = mongo.Connect(copts)
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("start mongod: connect: %w", err)
	}
	if err := p.awaitHello(ctx, opts); err != nil {
		p.kill()
		p.disconnect()
		return nil, err
	}
	return p, nil
}

func (p *process) reap() {
	p.cmd.Wait()
	p.exitedAt = time.Now()
	p.state = p.cmd.ProcessState
	p.logFile.Close()
	close(p.exited)
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// uri is the driver URI of the first bind address.
func (p *process) uri() string {
	host := strings.TrimSpace(strings.Split(p.spec.BindIP, ",")[0])
	return "mongodb://" + net.JoinHostPort(host, strconv.Itoa(p.spec.Port)) + "/?directConnection=true"
}

// awaitHello polls hello until it answers, the process exits, the start
// timeout passes or ctx ends.
func (p *process) awaitHello(ctx context.Context, opts StartOptions) error {
	tctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	// Cancel attempts in flight as soon as the process exits. This
	// goroutine is owned by awaitHello and ends when it returns.
	actx, acancel := context.WithCancel(tctx)
	defer acancel()
	go func() {
		select {
		case <-p.exited:
			acancel()
		case <-actx.Done():
		}
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastErr error
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("start mongod: %s before answering hello; %s",
				exitDescription(p.state), p.quoteLog())
		case <-tctx.Done():
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("start mongod: %w before it answered hello; killed it; %s", err, p.quoteLog())
			}
			return fmt.Errorf("start mongod: no answer to hello within %s (last error: %v); killed it; %s",
				opts.StartTimeout, lastErr, p.quoteLog())
		case <-timer.C:
		}
		if lastErr = p.hello(actx); lastErr == nil {
			return nil
		}
		timer.Reset(opts.PollInterval)
	}
}

// hello runs {hello: 1}, falling back to isMaster on servers older than
// 4.4.2 that do not know hello.
func (p *process) hello(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	admin := p.client.Database("admin")
	err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Err()
	var se mongo.ServerError
	if errors.As(err, &se) && se.HasErrorCode(59) { // CommandNotFound
		err = admin.RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Err()
	}
	return err
}

// quoteLog words the end of the server's output for an error message: its
// last error-level line, else its last lines (see summarizeLog).
func (p *process) quoteLog() string { return summarizeLog(p.tail.Last(-1)) }

// exitDescription says how a process ended: "exited with status 3" or
// "was killed by signal 9 (SIGKILL)".
func exitDescription(st *os.ProcessState) string {
	status := exitStatus(st)
	if strings.HasPrefix(status, "killed") {
		return "was " + status
	}
	return status
}

// exitStatus words a process's end: "exited with status 3" or "killed by
// signal 9 (SIGKILL)".
func exitStatus(st *os.ProcessState) string {
	code, sig, name := exitCodes(st)
	switch {
	case sig != 0 && name != "":
		return fmt.Sprintf("killed by signal %d (%s)", sig, name)
	case sig != 0:
		return fmt.Sprintf("killed by signal %d", sig)
	case code >= 0:
		return fmt.Sprintf("exited with status %d", code)
	}
	return "exited"
}

// exitCodes returns a process's exit status (-1 when a signal ended it or
// it is not known), the signal that killed it (0: none) and its name
// ("SIGKILL"; empty when not known).
func exitCodes(st *os.ProcessState) (code, sig int, name string) {
	if st == nil {
		return -1, 0, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return st.ExitCode(), 0, ""
}

// signal sends sig to the server's process group.
func (p *process) signal(sig syscall.Signal) {
	syscall.Kill(-p.pid(), sig)
}

// kill ends the process group with SIGKILL and waits for the reaper.
func (p *process) kill() {
	p.stopping.Store(true)
	p.signal(syscall.SIGKILL)
	<-p.exited
}

func (p *process) disconnect() {
	if p.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	p.client.Disconnect(ctx)
}

func (s *Server) current() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// URI is the driver URI of the server, with directConnection=true.
func (s *Server) URI() string { return s.current().uri() }

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.current().spec.Port }

// PID is the process id of the running (or last) server process.
func (s *Server) PID() int { return s.current().pid() }

// Spec is the spec the current process was started with, with the
// defaults Start filled in (bind address, picked port).
func (s *Server) Spec() ServerSpec { return s.current().spec }

// Client is the one driver client connected to the current process. A
// Restart replaces it; the old one is disconnected.
func (s *Server) Client() *mongo.Client { return s.current().client }

// Exited is closed when the current process has ended, whether stopped or
// crashed.
func (s *Server) Exited() <-chan struct{} { return s.current().exited }

// ExitErr describes a crash: the current process ended without Stop being
// called. It is nil while the server runs and after a Stop.
func (s *Server) ExitErr() error {
	p := s.current()
	select {
	case <-p.exited:
	default:
		return nil
	}
	if p.stopping.Load() {
		return nil
	}
	return fmt.Errorf("mongod pid %d on port %d %s without being stopped; %s",
		p.pid(), p.spec.Port, exitDescription(p.state), p.quoteLog())
}

// LogTail returns up to n of the last output lines of the current process
// (at most 50 are kept), oldest first.
func (s *Server) LogTail(n int) []string { return s.current().tail.Last(n) }

// Process is one run of the server binary: the one that was current when
// Server.Process was called. A Restart does not change what it stands for.
type Process struct{ p *process }

// ProcessExit is how a server process ended.
type ProcessExit struct {
	// At is when this process saw it end (it reaps the server at once).
	At time.Time
	// Code is the exit status, -1 when a signal ended the process; Signal
	// is that signal (0: none) and SignalName its name ("SIGKILL").
	Code       int
	Signal     int
	SignalName string
	// Stopped is true when Stop, Restart or a failed start ended it: the
	// exit was asked for, not a crash.
	Stopped bool
	// Log words the end of the server's output: its last error-level line,
	// else its last lines.
	Log string
}

// Process returns the server's current process.
func (s *Server) Process() Process { return Process{s.current()} }

// PID is the process id.
func (pr Process) PID() int { return pr.p.pid() }

// Exited is closed when the process has ended.
func (pr Process) Exited() <-chan struct{} { return pr.p.exited }

// Exit tells how the process ended; ok is false while it runs.
func (pr Process) Exit() (exit ProcessExit, ok bool) {
	select {
	case <-pr.p.exited:
	default:
		return ProcessExit{}, false
	}
	exit = ProcessExit{At: pr.p.exitedAt, Stopped: pr.p.stopping.Load(), Log: pr.p.quoteLog()}
	exit.Code, exit.Signal, exit.SignalName = exitCodes(pr.p.state)
	return exit, true
}
