package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/hostctl"
)

// How wtd tells that a server it counts on is gone. A server wtd started
// is gone as soon as its process exits without wtd stopping it. Any server,
// started or attached, is watched with a ping a second: when one fails and
// the server's port refuses connections, nothing listens there any more
// (it was killed where wtd cannot see it exit, or shut down); when no ping
// has been answered for UnansweredWindow it is frozen (SIGSTOP) or hung. A
// ping is answered without the storage engine, so a server that is slow
// because WiredTiger is busy still answers it.
const (
	UnansweredWindow = 5 * time.Second
	// pingInterval is the pause after an answered ping, pingRetry the one
	// after a failed one.
	pingInterval = time.Second
	pingRetry    = 250 * time.Millisecond
)

// ServerDownError says that a server went down while a load, workload or
// step was using it: its process exited without wtd stopping it, or it
// stopped answering.
type ServerDownError struct {
	Server string
	// At is when the server went down: when wtd saw its process exit, or
	// the last moment it was seen answering.
	At time.Time
	// Exit says how the process ended ("killed by signal 9, SIGKILL",
	// "status 14"); empty when the server stopped answering.
	Exit string
	// Silence is how long pings had gone unanswered when wtd gave up, and
	// LastErr the last ping's error (a server that stopped answering).
	Silence time.Duration
	LastErr error
	// Refused is the refused connection that showed nothing listens on
	// the server's port any more.
	Refused error
	// Log words the end of the server's output (a server wtd started).
	Log string
	// From and Of place At in words: "3.1 s into the step" (From zero:
	// the wall-clock time).
	From time.Time
	Of   string
}

func (e *ServerDownError) Error() string {
	var b strings.Builder
	switch {
	case e.Exit != "":
		fmt.Fprintf(&b, "server %s exited (%s) %s", e.Server, e.Exit, e.when())
	case e.Refused != nil && e.LastErr != nil:
		fmt.Fprintf(&b, "server %s stopped answering %s (ping: %v; nothing listens on its port: %v)", e.Server, e.when(), e.LastErr, e.Refused)
	case e.Refused != nil:
		fmt.Fprintf(&b, "server %s stopped answering %s (nothing listens on its port: %v)", e.Server, e.when(), e.Refused)
	default:
		fmt.Fprintf(&b, "server %s stopped answering %s (no reply to ping for %.1f s: %v)", e.Server, e.when(), e.Silence.Seconds(), e.LastErr)
	}
	if e.Log != "" {
		b.WriteString("; " + e.Log)
	}
	return b.String()
}

// DownAt returns when the server went down (At): a *ServerDownError is a
// workload.DownError.
func (e *ServerDownError) DownAt() time.Time { return e.At }

// when places At: "3.1 s into the step", "0.4 s before the step" or, with
// no From, "at 15:04:05.000".
func (e *ServerDownError) when() string {
	if e.From.IsZero() {
		return "at " + e.At.Format("15:04:05.000")
	}
	d := e.At.Sub(e.From)
	if d < 0 {
		return fmt.Sprintf("%.1f s before the %s", -d.Seconds(), e.Of)
	}
	return fmt.Sprintf("%.1f s into the %s", d.Seconds(), e.Of)
}

// since returns e placed relative to from, the start of of ("step").
func (e *ServerDownError) since(from time.Time, of string) *ServerDownError {
	c := *e
	c.From, c.Of = from, of
	return &c
}

// downWatch watches a server while a load, workload or step uses it (see
// UnansweredWindow). It stands aside while wtd itself stops or restarts the
// server, and after a restart watches the new process.
type downWatch struct {
	s      *Server
	start  time.Time
	of     string
	onDown func(*ServerDownError)
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	down       *ServerDownError
	lastAnswer time.Time
}

// watchDown starts watching s for a use of it named of ("workload"); the
// errors it finds are placed relative to now. onDown, if not nil, is called
// once, from the watching goroutine, when s goes down. The watch ends with
// ctx or stop.
func (s *Server) watchDown(ctx context.Context, of string, onDown func(*ServerDownError)) *downWatch {
	ctx, cancel := context.WithCancel(ctx)
	now := time.Now()
	w := &downWatch{s: s, start: now, lastAnswer: now, of: of, onDown: onDown, cancel: cancel, done: make(chan struct{})}
	go w.loop(ctx)
	return w
}

// stop ends the watch and returns how the server went down, nil if it did
// not. A process that exited by now counts even if the watching goroutine
// had not noticed yet.
func (w *downWatch) stop() *ServerDownError {
	w.cancel()
	<-w.done
	if pr, ok := w.s.process(); ok {
		w.note(w.s.exitError(pr))
	}
	return w.found()
}

// check tells at once whether the server is down, for a load or workload
// whose operations all fail: it went down if the watch found so, its
// process exited or its port refuses connections.
func (w *downWatch) check(ctx context.Context) *ServerDownError {
	pr, started := w.s.process()
	if started {
		w.note(w.s.exitError(pr))
	}
	if e := w.found(); e != nil || !w.s.available() {
		return e
	}
	if refused := w.s.refuses(ctx); refused != nil {
		if started && exitSoon(ctx, pr.Exited()) {
			w.note(w.s.exitError(pr))
			return w.found()
		}
		w.mu.Lock()
		at := w.lastAnswer
		w.mu.Unlock()
		w.note(&ServerDownError{Server: w.s.Name, At: at, Refused: refused})
	}
	return w.found()
}

// note keeps e (placed relative to the watch's start) unless the watch
// already found the server down; nil e is ignored. It reports whether e
// was kept.
func (w *downWatch) note(e *ServerDownError) bool {
	if e == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down != nil {
		return false
	}
	w.down = e.since(w.start, w.of)
	return true
}

func (w *downWatch) found() *ServerDownError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down
}

// hook is w.check as a load's or workload's Down hook.
func (w *downWatch) hook(ctx context.Context) func() error {
	return func() error {
		if e := w.check(ctx); e != nil {
			return e
		}
		return nil
	}
}

// report notes e and calls onDown with it.
func (w *downWatch) report(e *ServerDownError) {
	if w.note(e) && w.onDown != nil {
		w.onDown(w.found())
	}
}

// answered notes that the server answered now.
func (w *downWatch) answered() time.Time {
	now := time.Now()
	w.mu.Lock()
	w.lastAnswer = now
	w.mu.Unlock()
	return now
}

// loop waits for the process to exit and pings the server, until the server
// is found down or ctx ends. Each ping waits at most pingInterval, so that a
// refused port is noticed soon even when the driver waits for the server.
func (w *downWatch) loop(ctx context.Context) {
	defer close(w.done)
	lastAnswer := w.start
	var asked hostctl.Process // a process whose exit wtd asked for
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var exited <-chan struct{}
		pr, started := w.s.process()
		if started && pr != asked {
			exited = pr.Exited()
		}
		select {
		case <-ctx.Done():
			return
		case <-exited:
			if e := w.s.exitError(pr); e != nil {
				w.report(e)
				return
			}
			asked = pr
			continue
		case <-timer.C:
		}
		if !w.s.available() { // wtd stopped it, or restarts it
			lastAnswer = w.answered()
			timer.Reset(pingInterval)
			continue
		}
		deadline := time.Now().Add(pingInterval)
		if end := lastAnswer.Add(UnansweredWindow); end.Before(deadline) {
			deadline = end
		}
		pctx, cancel := context.WithDeadline(ctx, deadline)
		err := w.s.ping(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil || !w.s.available():
			lastAnswer = w.answered()
			timer.Reset(pingInterval)
		case exited != nil && isClosed(exited):
			timer.Reset(0) // the exit says more than the ping
		default:
			e := w.s.unanswered(ctx, lastAnswer, err)
			switch {
			case e == nil:
				timer.Reset(pingRetry)
			case exitSoon(ctx, exited):
				timer.Reset(0) // the exit says more than the ping
			default:
				w.report(e)
				return
			}
		}
	}
}

// exitSoon reports whether exited (nil: a server wtd did not start) is
// closed within pingInterval: a server whose port refuses connections has
// exited, but the reaper may not have seen it yet.
func exitSoon(ctx context.Context, exited <-chan struct{}) bool {
	if exited == nil {
		return false
	}
	t := time.NewTimer(pingInterval)
	defer t.Stop()
	select {
	case <-exited:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// unanswered returns why a server whose ping failed with err, and that last
// answered at lastAnswer, is down: its port refuses connections, or it has
// not answered for UnansweredWindow. It returns nil when it may still be
// up.
func (s *Server) unanswered(ctx context.Context, lastAnswer time.Time, err error) *ServerDownError {
	if refused := s.refuses(ctx); refused != nil {
		return &ServerDownError{Server: s.Name, At: lastAnswer, LastErr: err, Refused: refused}
	}
	if silence := time.Since(lastAnswer); silence >= UnansweredWindow {
		return &ServerDownError{Server: s.Name, At: lastAnswer, Silence: silence, LastErr: err}
	}
	return nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// process returns the server's current process; false when wtd did not
// start the server or has it down (stopped, or between stop and start).
func (s *Server) process() (hostctl.Process, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil || s.down {
		return hostctl.Process{}, false
	}
	return s.hs.Process(), true
}

// exitError returns how pr ended when it exited without wtd asking, nil
// while it runs or when wtd stopped it.
func (s *Server) exitError(pr hostctl.Process) *ServerDownError {
	exit, ok := pr.Exit()
	if !ok || exit.Stopped {
		return nil
	}
	return &ServerDownError{Server: s.Name, At: exit.At, Exit: exitWords(exit), Log: exit.Log}
}

// exitWords says how a process ended: "killed by signal 9, SIGKILL",
// "status 14".
func exitWords(e hostctl.ProcessExit) string {
	switch {
	case e.Signal != 0 && e.SignalName != "":
		return fmt.Sprintf("killed by signal %d, %s", e.Signal, e.SignalName)
	case e.Signal != 0:
		return fmt.Sprintf("killed by signal %d", e.Signal)
	case e.Code >= 0:
		return fmt.Sprintf("status %d", e.Code)
	}
	return "status unknown"
}

// refuses returns the error of a connection to the server's port that was
// refused, nil when one could be made (or failed otherwise).
func (s *Server) refuses(ctx context.Context) error {
	s.mu.Lock()
	uri := s.uri
	s.mu.Unlock()
	addr, err := hostctl.CheckURI(uri)
	if err != nil {
		return nil
	}
	dialer := s.run.cfg.StartOptions.Dialer
	if dialer == nil {
		dialer = hostctl.LoopbackDialer
	}
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := dialer.DialContext(dctx, "tcp", addr)
	if err == nil {
		conn.Close()
		return nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	return nil
}

// ping runs {ping: 1}.
func (s *Server) ping(ctx context.Context) error {
	return s.Client().Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
}
