package web

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The HTTP server's bounds on what one client can hold: a connection must
// send its request headers within readHeaderTimeout and the whole request
// within readTimeout, gets its answer written within writeTimeout, and is
// closed after idleTimeout without a next request.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = time.Minute
	idleTimeout       = 30 * time.Second
	maxHeaderBytes    = 64 << 10
)

// newConnGrace is how long a new connection may stay silent before it
// may be closed to make room: a client that has just connected has sent
// its request, or is about to.
const newConnGrace = time.Second

// NewHTTPServer returns the http.Server that serves h, and the listener
// it is to serve on: ln with at most maxConns connections open at once.
// When all of them are open, the one that has waited longest for a
// request is closed to make room: one idle between keep-alive requests,
// or one connected and silent for more than newConnGrace (counted from
// then). A new client (a health check) thus gets through however many
// idle connections others hold; only while every connection is busy with
// a request, or has just connected, does a new one wait for a slot.
func NewHTTPServer(h http.Handler, ln net.Listener, maxConns int) (*http.Server, net.Listener) {
	g := &connGuard{Listener: ln, max: max(maxConns, 1), waiting: map[*guardedConn]time.Time{},
		changed: make(chan struct{}, 1), done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes, ConnState: g.connState}
	return srv, g
}

// connGuard is a listener that keeps at most max connections open.
type connGuard struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// waiting are the open connections that wait for a request, each with
	// the time from which it may be closed to make room.
	waiting map[*guardedConn]time.Time
	// changed gets a signal when a connection closes or starts waiting.
	changed   chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Accept takes a slot, closing a waiting connection when none is free,
// then accepts the next connection.
func (g *connGuard) Accept() (net.Conn, error) {
	if err := g.takeSlot(); err != nil {
		return nil, err
	}
	c, err := g.Listener.Accept()
	if err != nil {
		g.mu.Lock()
		g.open--
		g.mu.Unlock()
		return nil, err
	}
	gc := &guardedConn{Conn: c, guard: g}
	g.mu.Lock()
	g.waiting[gc] = time.Now().Add(newConnGrace)
	g.mu.Unlock()
	return gc, nil
}

// takeSlot returns once a connection may be accepted, or net.ErrClosed
// when the listener is closed.
func (g *connGuard) takeSlot() error {
	for {
		g.mu.Lock()
		if g.open < g.max {
			g.open++
			g.mu.Unlock()
			return nil
		}
		victim, at := g.nextVictim()
		g.mu.Unlock()
		if victim != nil && !at.After(time.Now()) {
			victim.Close()
			continue
		}
		if err := g.wait(victim != nil, at); err != nil {
			return err
		}
	}
}

// wait returns when a connection closes or starts waiting, or at until
// (when timed), or net.ErrClosed when the listener is closed.
func (g *connGuard) wait(timed bool, until time.Time) error {
	var later <-chan time.Time
	if timed {
		timer := time.NewTimer(time.Until(until))
		defer timer.Stop()
		later = timer.C
	}
	select {
	case <-g.changed:
	case <-later:
	case <-g.done:
		return net.ErrClosed
	}
	return nil
}

// nextVictim returns the waiting connection to close first and from when
// it may be (nil: none waits); g.mu is held.
func (g *connGuard) nextVictim() (*guardedConn, time.Time) {
	var first *guardedConn
	var at time.Time
	for c, t := range g.waiting {
		if first == nil || t.Before(at) {
			first, at = c, t
		}
	}
	return first, at
}

// connState follows the server's view of each connection: idle ones may
// be closed to make room, busy ones may not.
func (g *connGuard) connState(c net.Conn, state http.ConnState) {
	gc, ok := c.(*guardedConn)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc.closed {
		return
	}
	switch state {
	case http.StateIdle:
		g.waiting[gc] = time.Now()
		g.signal()
	case http.StateActive, http.StateHijacked:
		delete(g.waiting, gc)
	}
}

// signal wakes a takeSlot that waits; g.mu is held or not.
func (g *connGuard) signal() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// Close closes the listener and wakes an Accept waiting for a slot.
func (g *connGuard) Close() error {
	g.closeOnce.Do(func() { close(g.done) })
	return g.Listener.Close()
}

// guardedConn is an accepted connection that frees its slot when closed.
type guardedConn struct {
	net.Conn
	guard *connGuard
	// closed is set, under guard.mu, when the slot is freed.
	closed bool
}

// Close closes the connection and frees its slot (once).
func (c *guardedConn) Close() error {
	g := c.guard
	g.mu.Lock()
	if !c.closed {
		c.closed = true
		delete(g.waiting, c)
		g.open--
		g.signal()
	}
	g.mu.Unlock()
	return c.Conn.Close()
}
