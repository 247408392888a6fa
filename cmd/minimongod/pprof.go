package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"wtd/minimongod/mlog"
)

// profileServer serves Go's profiling handlers (/debug/pprof/...) for
// --pprof. It owns one goroutine, started by serveProfiles and ended and
// waited for by Close.
type profileServer struct {
	srv  *http.Server
	addr net.Addr
	// done is closed when the serving goroutine has returned.
	done chan struct{}
}

// startProfiles listens on addr, a loopback address the options checked,
// and serves the profiles there until Close.
func startProfiles(addr string, log *mlog.Logger) (*profileServer, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for --pprof on %s: %w", addr, err)
	}
	return serveProfiles(l, log), nil
}

// serveProfiles serves the profiles on l. When serving ends for any reason
// but Close (the listener failing), the error is logged as it happens:
// the process goes on without profiles.
func serveProfiles(l net.Listener, log *mlog.Logger) *profileServer {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	p := &profileServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, addr: l.Addr(), done: make(chan struct{})}
	log.Info("CONTROL", 4700100, "initandlisten", "Serving Go profiles", mlog.A("address", p.addr.String()))
	go func() {
		defer close(p.done)
		if err := p.srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			log.Error("CONTROL", 4700103, "pprof", "Go profiles are no longer served", mlog.A("address", p.addr.String()), mlog.A("error", err.Error()))
		}
	}()
	return p
}

// Close closes the listener and every open connection (a profile being
// taken ends at once) and waits for the serving goroutine to return.
func (p *profileServer) Close() error {
	err := p.srv.Close()
	<-p.done
	if err != nil {
		return fmt.Errorf("stop serving Go profiles on %s: %w", p.addr, err)
	}
	return nil
}
