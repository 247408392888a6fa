package web

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"wtd/hostctl"
)

// mutating guards a handler that changes something: with a token
// configured it needs "Authorization: Bearer TOKEN"; a browser's request
// from a page of another origin is refused either way.
func (s *Server) mutating(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				writeError(w, http.StatusForbidden, "cross-origin request refused")
				return
			}
		}
		if tok := s.opts.Scheduler.Config().Token; tok != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(tok)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="wtd"`)
				writeError(w, http.StatusUnauthorized, "this call needs the bearer token of the daemon's token_file (Authorization: Bearer TOKEN)")
				return
			}
		}
		h(w, r)
	}
}

// sameHost refuses a request whose Host header names something other than
// a loopback address while the API listens on loopback: a web page that
// re-points its own name at 127.0.0.1 (DNS rebinding) cannot read it.
func sameHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	lhost, _, err := net.SplitHostPort(local.String())
	if err != nil || hostctl.CheckLoopback(lhost) != nil {
		return true
	}
	return hostctl.CheckLoopback(r.Host) == nil
}
