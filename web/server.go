// Package web is the daemon's HTTP API (JSON under /api/v1, /healthz,
// /metrics for Prometheus) and its dashboard (HTML pages at /, /runs/{id},
// /schedules and /compare). Read-only
// calls are open; calls that change something (POST: firing a schedule,
// aborting a run, importing FTDC files) need the bearer token when the
// config names a token_file.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wtd/engine/store"
	"wtd/fleet"
	"wtd/schedule"
)

// Scheduler is what the API needs of the daemon's scheduler
// (*schedule.Scheduler).
type Scheduler interface {
	Config() schedule.Config
	Status(n int) ([]schedule.ScheduleStatus, []schedule.WindowStatus)
	FireNow(ctx context.Context, name string) (int64, error)
	Abort(id int64, cause error) bool
	Current() (int64, string)
}

// Options are what the API serves.
type Options struct {
	Store     *store.Store
	Scheduler Scheduler
	Log       *slog.Logger
	// Registry gets the daemon's metrics; nil means a new one. Metrics
	// collected elsewhere (e.g. run durations) register in it too.
	Registry *prometheus.Registry
	// MaxImportBytes caps an upload to POST /api/v1/import;
	// DefaultMaxImportBytes when 0.
	MaxImportBytes int64
	// Results is the central results store the fleet page reads (zero:
	// none configured).
	Results fleet.Config
}

// Server is the daemon's HTTP handler.
type Server struct {
	opts      Options
	mux       *routes
	importing sync.Mutex // one upload imported at a time
}

// routes is the server's router; it keeps the pattern of every route
// registered, so that tests go through them all (every mutating one must
// refuse a caller without the token).
type routes struct {
	*http.ServeMux
	patterns []string
}

// Handle registers h for pattern.
func (m *routes) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers h for pattern.
func (m *routes) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(h))
}

// New returns the API's handler with every route registered; Handle adds
// more (the dashboard's pages).
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	s := &Server{opts: opts, mux: &routes{ServeMux: http.NewServeMux()}}
	opts.Registry.MustRegister(newCollector(opts.Store, opts.Scheduler, opts.Log))
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Registry, promhttp.HandlerOpts{}))
	s.mux.HandleFunc("GET /api/v1/schedules", s.listSchedules)
	s.mux.HandleFunc("POST /api/v1/schedules/{name}/run", s.mutating(s.fireSchedule))
	s.mux.HandleFunc("GET /api/v1/runs", s.listRuns)
	s.mux.HandleFunc("GET /api/v1/runs/{id}", s.getRun)
	s.mux.HandleFunc("GET /api/v1/runs/{id}/samples", s.getSamples)
	s.mux.HandleFunc("POST /api/v1/runs/{id}/abort", s.mutating(s.abortRun))
	s.mux.HandleFunc("POST /api/v1/import", s.mutating(s.importFTDC))
	s.registerDashboard()
	return s
}

// Handle registers a handler for pattern (net/http's patterns), e.g. the
// dashboard's pages.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// ServeHTTP serves a request, with every error as JSON.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !sameHost(r) {
		writeError(w, http.StatusForbidden, "the Host header names another host: the API answers only under the name it listens on")
		return
	}
	s.mux.ServeHTTP(&jsonErrorWriter{ResponseWriter: w}, r)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	id, sched := s.opts.Scheduler.Current()
	body := map[string]any{"status": "ok"}
	if id > 0 {
		body["running"] = map[string]any{"run_id": id, "schedule": sched}
	}
	writeJSON(w, http.StatusOK, body)
}
