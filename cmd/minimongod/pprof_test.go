package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"wtd/minimongod/mlog"
)

// failingListener is a real loopback listener whose Accept fails with err
// (an accept error other than the listener being closed).
type failingListener struct {
	net.Listener
	err error
}

func (l failingListener) Accept() (net.Conn, error) { return nil, l.err }

// waitDone waits up to 10 s for the serving goroutine to return.
func waitDone(t *testing.T, p *profileServer) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the profile server's goroutine did not return within 10s")
	}
}

// The profile server serves until Close, which closes its listener, ends a
// profile being taken and waits for its goroutine; an accept failure that
// is not Close's is logged when it happens.
func TestProfileServer(t *testing.T) {
	cases := []struct {
		name string
		// listener wraps the loopback listener the server is given.
		listener func(net.Listener) net.Listener
		// run exercises the server and returns when it should be closed.
		run     func(t *testing.T, p *profileServer)
		wantLog string // in the log after Close; "" means no error line
	}{
		{"serves until closed", func(l net.Listener) net.Listener { return l }, func(t *testing.T, p *profileServer) {
			resp, err := http.Get("http://" + p.addr.String() + "/debug/pprof/cmdline")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "minimongod.test") {
				t.Errorf("cmdline: %d %q, want 200 and the test binary's name", resp.StatusCode, body)
			}
		}, ""},
		{"close ends a profile being taken", func(l net.Listener) net.Listener { return l }, func(t *testing.T, p *profileServer) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got := make(chan error, 1)
			go func() {
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.addr.String()+"/debug/pprof/profile?seconds=60", nil)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				got <- err
			}()
			// Close while the request is in the handler: wait for the
			// server to have a connection.
			deadline := time.Now().Add(10 * time.Second)
			for !profileHandlerRunning() {
				if time.Now().After(deadline) {
					t.Fatal("the CPU profile handler is not running 10s after asking for a profile")
				}
				time.Sleep(10 * time.Millisecond)
			}
			start := time.Now()
			if err := p.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Close took %v with a 60 s profile running", took)
			}
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the profile request still runs 10s after Close")
			}
		}, ""},
		{"accept failure is logged", func(l net.Listener) net.Listener {
			return failingListener{l, errors.New("accept: too many open files")}
		}, func(t *testing.T, p *profileServer) { waitDone(t, p) }, `"msg":"Go profiles are no longer served"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			p := serveProfiles(tc.listener(l), mlog.New(&out))
			tc.run(t, p)
			if err := p.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			select {
			case <-p.done:
			default:
				t.Fatal("Close returned before the serving goroutine did")
			}
			// The goroutine has returned: the log is complete.
			log := out.String()
			if tc.wantLog == "" && strings.Contains(log, `"s":"E"`) {
				t.Errorf("error logged:\n%s", log)
			}
			if tc.wantLog != "" && (!strings.Contains(log, tc.wantLog) || !strings.Contains(log, "too many open files")) {
				t.Errorf("log lacks %s with the accept error:\n%s", tc.wantLog, log)
			}
			if c, err := net.DialTimeout("tcp", p.addr.String(), time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections after Close", p.addr)
			}
		})
	}
}

// profileHandlerRunning reports whether a goroutine of this process is in
// net/http/pprof's CPU profile handler.
func profileHandlerRunning() bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("net/http/pprof.Profile("))
}
