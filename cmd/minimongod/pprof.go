package main

import (
	"net"
	"net/http"
	"net/http/pprof"

	"wtd/minimongod/mlog"
)

// servePprof serves Go's profiling handlers (/debug/pprof/...) on addr, a
// loopback address the options checked, for as long as the process runs.
func servePprof(addr string, log *mlog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("CONTROL", 4700100, "initandlisten", "Serving Go profiles", mlog.A("address", l.Addr().String()))
	go http.Serve(l, mux)
	return nil
}
