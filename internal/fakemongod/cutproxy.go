package fakemongod

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// CutProxy passes connections to a server until a message a client sends
// holds given bytes: it drops that message, calls its cut function (which
// may stop the server or kill the client's process) and closes every
// connection. Connections after that pass again.
type CutProxy struct {
	ln       net.Listener
	upstream string
	cut      []byte
	onCut    func()
	mu       sync.Mutex
	done     bool
	conns    []net.Conn
}

// StartCutProxy listens on a free loopback port in front of upstream
// (host:port) and is closed when the test ends.
func StartCutProxy(t testing.TB, upstream string, cut []byte, onCut func()) *CutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{ln: ln, upstream: upstream, cut: cut, onCut: onCut}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// Addr is the proxy's host:port.
func (p *CutProxy) Addr() string { return p.ln.Addr().String() }

// Cut reports whether the cut happened.
func (p *CutProxy) Cut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

func (p *CutProxy) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go io.Copy(c, up)
	buf := make([]byte, 1<<16)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cutNow := !p.done && bytes.Contains(buf[:n], p.cut)
			p.done = p.done || cutNow
			p.mu.Unlock()
			if cutNow {
				p.onCut()
				p.mu.Lock()
				for _, x := range p.conns {
					x.Close()
				}
				p.mu.Unlock()
				return
			}
			if _, err := up.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
