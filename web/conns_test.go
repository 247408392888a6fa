package web

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"wtd/engine/store"
)

// serveGuarded serves h through NewHTTPServer with at most maxConns
// connections on a free loopback port and returns its address and guard.
func serveGuarded(t *testing.T, h http.Handler, maxConns int) (string, *connGuard) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, guarded := NewHTTPServer(h, ln, maxConns)
	go srv.Serve(guarded)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), guarded.(*connGuard)
}

// holdConn dials addr and, when get, sends one keep-alive GET /healthz and
// reads its answer; the connection stays open.
func holdConn(t *testing.T, addr string, get bool) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if !get {
		return c
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("keep-alive GET /healthz: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetDeadline(time.Time{})
	return c
}

// closedByServer reports whether the server closed c (a read ends at
// EOF or a reset rather than waiting).
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// TestHeldConnectionsDoNotShutOutNewClients: with the cap at 4, more
// connections than that, idle after one keep-alive GET each or connected
// and silent, do not keep a new client out: GET /healthz answers within
// 3 s (the silent ones only after newConnGrace), the server closed all
// but the cap of the held ones, and never more than the cap are open.
func TestHeldConnectionsDoNotShutOutNewClients(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	const maxConns = 4
	for _, tc := range []struct {
		name  string
		conns int
		get   bool
	}{
		{"idle after one GET each", 3 * maxConns, true},
		{"connected and silent", maxConns + 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, guard := serveGuarded(t, New(Options{Store: st, Scheduler: fakeScheduler{}}), maxConns)
			held := make([]net.Conn, tc.conns)
			for i := range held {
				held[i] = holdConn(t, addr, tc.get)
			}
			client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			start := time.Now()
			resp, err := client.Get("http://" + addr + "/healthz")
			if err != nil {
				t.Fatalf("GET /healthz with %d connections held: %v", tc.conns, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET /healthz: %d", resp.StatusCode)
			}
			t.Logf("/healthz answered in %s", time.Since(start).Round(time.Millisecond))
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				closed := 0
				for _, c := range held {
					if closedByServer(c) {
						closed++
					}
				}
				if closed >= tc.conns-maxConns {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the server closed %d of the %d held connections, want at least %d", closed, tc.conns, tc.conns-maxConns)
				}
			}
			guard.mu.Lock()
			open := guard.open
			guard.mu.Unlock()
			if open > maxConns {
				t.Errorf("%d connections open, cap %d", open, maxConns)
			}
		})
	}
}

// TestBusyConnectionsAreNotClosedToMakeRoom: with the cap at 2 and two
// requests being answered, a third client waits (its connection is not
// taken) and the two answers are not cut; once they are done, the third
// is answered.
func TestBusyConnectionsAreNotClosedToMakeRoom(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		io.WriteString(w, "slow done")
	})
	mux.HandleFunc("GET /fast", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fast done") })
	addr, _ := serveGuarded(t, mux, 2)
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string, answers chan<- string) {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			answers <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answers <- string(b)
	}
	slow := make(chan string, 2)
	go get("/slow", slow)
	go get("/slow", slow)
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("the two slow requests did not reach the handler within 10 s")
		}
	}
	fast := make(chan string, 1)
	go get("/fast", fast)
	select {
	case got := <-fast:
		t.Fatalf("a third connection was served while the cap's two were busy: %q", got)
	case got := <-slow:
		t.Fatalf("a busy request ended before it was released: %q", got)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	for range 2 {
		if got := <-slow; got != "slow done" {
			t.Errorf("a busy request got %q, want its answer", got)
		}
	}
	if got := <-fast; got != "fast done" {
		t.Errorf("the third request, once a slot was free: %q", got)
	}
}
