// Package server is minimongod's MongoDB-compatible server: it owns the
// listeners, the client connections, command dispatch, cursors, server
// parameters, serverStatus, admission control (read and write tickets with
// FIFO queues and throughput probing), the registry of in-flight
// operations (currentOp, killOp) and the background checkpoint, journal,
// TTL monitor and ticket adjustment threads, over the storage package's
// engine.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"wtd/minimongod/mlog"
	"wtd/minimongod/options"
	"wtd/minimongod/storage"
	"wtd/minimongod/wt"
)

// Imitated release and minimongod's own version.
const (
	MongoVersion      = "4.4.29"
	Version           = "0.1.0"
	WiredTigerVersion = "3.2.1"
	maxWireVersion    = 9
)

// SnappyExtension is the WiredTiger snappy compressor shipped by Debian's
// libwiredtiger package.
var SnappyExtension = "/usr/lib/x86_64-linux-gnu/libwiredtiger_snappy.so"

// ExitError is a startup failure with mongod's exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// mongod's exit codes.
const (
	ExitBadOptions   = 2
	ExitNetError     = 48
	ExitUncaught     = 100
	ExitLockFileBusy = 100
)

// Server is a running minimongod.
type Server struct {
	opts     *options.Options
	argv     []string
	log      *mlog.Logger
	totalRAM uint64

	conn   *wt.Conn
	eng    *storage.Engine
	lock   *os.File
	params *params

	listeners []net.Listener
	started   time.Time

	cursors cursorRegistry
	stats   counters
	ops     opRegistry
	exec    *execControl
	// failpoints are the test fail points (enableTestCommands).
	failpoints failpoints
	// profiler is the database profiler and slow query log.
	profiler profiler
	// engineFailure is what WiredTiger last reported as an error.
	engineFailure engineFailure

	mu       sync.Mutex
	conns    map[*clientConn]struct{}
	connSeq  atomic.Int64
	inflight sync.WaitGroup
	closing  atomic.Bool

	bgStop chan struct{}
	bgDone sync.WaitGroup

	shutdownOnce sync.Once
	shutdownReq  chan struct{}
}

// New opens the data directory and the engine and binds the listeners;
// Serve then accepts clients.
func New(opts *options.Options, argv []string, log *mlog.Logger, totalRAM uint64) (*Server, error) {
	s := &Server{opts: opts, argv: argv, log: log, totalRAM: totalRAM, conns: map[*clientConn]struct{}{},
		bgStop: make(chan struct{}), shutdownReq: make(chan struct{}), started: time.Now()}
	s.cursors.init()
	s.ops.init()
	s.profiler.init(opts.ProfileLevel, opts.SlowMS, opts.SlowOpSampleRate)
	s.exec = newExecControl()
	p, err := newParams(s, opts.SetParameters)
	if err != nil {
		return nil, &ExitError{Code: ExitBadOptions, Err: err}
	}
	s.params = p
	if err := opts.CheckDBPath(); err != nil {
		return nil, &ExitError{Code: ExitUncaught, Err: err}
	}
	unclean, err := s.lockDBPath()
	if err != nil {
		return nil, err
	}
	if err := s.openEngine(unclean); err != nil {
		s.unlock()
		return nil, err
	}
	if err := s.listen(); err != nil {
		s.closeEngine()
		s.unlock()
		return nil, err
	}
	return s, nil
}

// lockDBPath takes dbpath/mongod.lock as mongod does; a non-empty lock file
// means the last run did not shut down cleanly.
func (s *Server) lockDBPath() (unclean bool, err error) {
	path := filepath.Join(s.opts.DBPath, "mongod.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, &ExitError{Code: ExitUncaught, Err: fmt.Errorf("Unable to create/open the lock file: %s (%v). Ensure the user executing mongod is the owner of the lock file and has the appropriate permissions. Also make sure that another mongod instance is not already running on the %s directory", path, errnoText(err), s.opts.DBPath)}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false, &ExitError{Code: ExitLockFileBusy, Err: fmt.Errorf("Unable to lock the lock file: %s (%v). Another mongod instance is already running on the %s directory", path, errnoText(err), s.opts.DBPath)}
	}
	st, _ := f.Stat()
	unclean = st != nil && st.Size() > 0
	if unclean {
		s.log.Warning("STORAGE", 22271, "initandlisten", "Detected unclean shutdown - Lock file is not empty", mlog.A("lockFile", path))
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	f.Sync()
	s.lock = f
	if s.opts.PIDFilePath != "" {
		if err := os.WriteFile(s.opts.PIDFilePath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			return false, &ExitError{Code: ExitUncaught, Err: fmt.Errorf("Cannot write pid file to %s: %v", s.opts.PIDFilePath, errnoText(err))}
		}
	}
	return unclean, nil
}

func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// unlock empties and releases the lock file: a clean shutdown.
func (s *Server) unlock() {
	if s.lock == nil {
		return
	}
	s.lock.Truncate(0)
	s.lock.Sync()
	s.lock.Close()
	s.lock = nil
	if s.opts.PIDFilePath != "" {
		os.Remove(s.opts.PIDFilePath)
	}
}

func (s *Server) openEngine(unclean bool) error {
	if err := os.MkdirAll(filepath.Join(s.opts.DBPath, "journal"), 0o755); err != nil {
		return &ExitError{Code: ExitUncaught, Err: fmt.Errorf("create journal directory: %w", err)}
	}
	ext := ""
	if _, err := os.Stat(SnappyExtension); err == nil {
		ext = SnappyExtension
	}
	cfg := s.opts.WiredTigerOpenConfig(s.totalRAM, ext)
	wt.SetMessageFunc(func(isErr bool, code int, msg string) {
		if isErr {
			s.log.Error("STORAGE", 22435, "WTError", "WiredTiger error", mlog.A("error", code), mlog.A("message", msg))
			s.onEngineError(code, msg)
			return
		}
		s.log.Info("STORAGE", 22430, "WTMessage", "WiredTiger message", mlog.A("message", msg))
	})
	s.log.Info("STORAGE", 22315, "initandlisten", "Opening WiredTiger", mlog.A("config", cfg))
	conn, err := wt.Open(s.opts.DBPath, cfg)
	if err != nil {
		return &ExitError{Code: ExitUncaught, Err: fmt.Errorf("open WiredTiger: %w", err)}
	}
	eng, err := storage.Open(conn, storage.Config{CollectionConfig: s.opts.CollectionConfig(), IndexConfig: s.opts.IndexConfig()}, unclean)
	if err != nil {
		conn.Close("")
		return &ExitError{Code: ExitUncaught, Err: err}
	}
	s.conn, s.eng = conn, eng
	return nil
}

func (s *Server) closeEngine() error {
	if s.eng == nil {
		return nil
	}
	err := s.eng.Close()
	s.log.Info("STORAGE", 22317, "SignalHandler", "WiredTigerKVEngine shutting down")
	if cerr := s.conn.Close(""); cerr != nil && err == nil {
		err = cerr
	}
	s.log.Info("STORAGE", 4795901, "SignalHandler", "WiredTiger closed")
	s.eng = nil
	return err
}

func (s *Server) listen() error {
	for _, ip := range s.opts.BindIP {
		addr := net.JoinHostPort(ip, strconv.Itoa(s.opts.Port))
		network, err := listenNetwork(ip, s.opts.IPv6)
		var ln net.Listener
		if err == nil {
			ln, err = net.Listen(network, addr)
		}
		if err != nil {
			for _, l := range s.listeners {
				l.Close()
			}
			s.log.Error("NETWORK", 23024, "initandlisten", "Failed to set up listener", mlog.A("error", err.Error()))
			return &ExitError{Code: ExitNetError, Err: fmt.Errorf("listen on %s: %w", addr, err)}
		}
		s.listeners = append(s.listeners, ln)
		s.log.Info("NETWORK", 23015, "listener", "Listening on", mlog.A("address", ln.Addr().String()))
	}
	return nil
}

// listenNetwork returns the network to listen on ip with: IPv4 only
// ("tcp4", so that 0.0.0.0 is not also [::]) unless --ipv6 is given, as
// mongod; an IPv6 address needs --ipv6.
func listenNetwork(ip string, ipv6 bool) (string, error) {
	if a := net.ParseIP(ip); a != nil && a.To4() == nil {
		if !ipv6 {
			return "", fmt.Errorf("IPv6 address %s given without --ipv6 (net.ipv6)", ip)
		}
		return "tcp6", nil
	}
	if ipv6 && net.ParseIP(ip) == nil {
		return "tcp", nil // a host name: its IPv4 and IPv6 addresses
	}
	// An IPv4 address is IPv4 only: "tcp" on 0.0.0.0 would take [::] too,
	// and --bind_ip_all --ipv6 also binds "::" itself.
	return "tcp4", nil
}

// Addr returns the first listener's address.
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

// Serve accepts clients and runs the background threads until ctx ends or
// a shutdown command arrives, then shuts down cleanly.
func (s *Server) Serve(ctx context.Context) error {
	s.startBackground()
	s.log.Info("NETWORK", 23016, "listener", "Waiting for connections", mlog.A("port", s.opts.Port), mlog.A("ssl", "off"))
	for _, ln := range s.listeners {
		go s.acceptLoop(ln)
	}
	select {
	case <-ctx.Done():
		s.log.Info("CONTROL", 23377, "SignalHandler", "Received signal", mlog.A("signal", context.Cause(ctx).Error()))
	case <-s.shutdownReq:
	}
	return s.shutdown()
}

func (s *Server) requestShutdown() {
	s.shutdownOnce.Do(func() { close(s.shutdownReq) })
}

func (s *Server) acceptLoop(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c := s.newClientConn(nc)
		if c == nil {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

// shutdown stops accepting, lets in-flight operations finish, closes the
// clients, stops the background threads, checkpoints and closes WiredTiger.
func (s *Server) shutdown() error {
	s.closing.Store(true)
	for _, ln := range s.listeners {
		ln.Close()
	}
	s.log.Info("NETWORK", 20562, "SignalHandler", "Shutdown: going to close listening sockets")
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.log.Warning("COMMAND", 4695200, "SignalHandler", "in-flight operations did not finish within 30s")
	}
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	close(s.bgStop)
	s.bgDone.Wait()
	// Wait for client goroutines to release their sessions.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	err := s.closeEngine()
	s.unlock()
	s.log.Info("CONTROL", 20565, "SignalHandler", "Now exiting")
	s.log.Info("CONTROL", 23138, "SignalHandler", "Shutting down", mlog.A("exitCode", 0))
	return err
}
