package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/store"
	"wtd/hostctl"
)

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// ServerOptions are where a run starts a server and the settings it
// starts it with (mongod.start).
type ServerOptions struct {
	// DBPath is the data directory; empty means a fresh one in the run's
	// directory.
	DBPath string
	// Port 0 picks a free loopback port.
	Port int
	hostctl.Settings
}

// ServerChanges are the settings a restart changes (see
// hostctl.SettingsChange: the options not given keep theirs).
type ServerChanges struct {
	hostctl.SettingsChange
	// Keep leaves a service's config change in place after the run
	// (keep = true); it is recorded as kept.
	Keep bool
}

// Server is a mongod a run uses: one it started (restartable) or one it
// attached to by URI.
type Server struct {
	run  *Run
	Name string

	mu       sync.Mutex
	hs       *hostctl.Server // nil when attached
	attached *mongo.Client
	uri      string
	restarts int
	down     bool // between stop and start during a restart, or stopped
	build    BuildInfo
	svc      *service // set for a server a service manager runs (mongod.service)
	// wtRuntime are the WiredTiger knobs this run has set at runtime
	// since the process last started (by knob name): WiredTiger cannot be
	// asked for its configuration, so wtd keeps count.
	wtRuntime map[string]float64
}

// ErrAttached is returned by Restart on a server the run did not start.
var ErrAttached = errors.New("cannot restart a server attached with mongod.connect: wtd did not start it; use mongod.start to let wtd manage the process")

// StartServer starts a fresh server with opts (mongod.start).
func (r *Run) StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	if r.cfg.MongodBinary == "" {
		return nil, errors.New("start mongod: no server binary (use --mongod PATH, $WTD_MONGOD, or put mongod or minimongod on PATH)")
	}
	r.mu.Lock()
	name := fmt.Sprintf("m%d", len(r.servers)+1)
	r.mu.Unlock()
	spec := hostctl.ServerSpec{Binary: r.cfg.MongodBinary, DBPath: opts.DBPath, Port: opts.Port, BindIP: hostctl.DefaultBindIP,
		Settings: opts.Settings}
	if spec.DBPath == "" {
		spec.DBPath = r.dir + "/" + name + "-db"
	} else if dbpath, err := r.checkDBPath(spec.DBPath); err != nil {
		return nil, err
	} else {
		spec.DBPath = dbpath
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(spec.DBPath, 0o755); err != nil {
		return nil, fmt.Errorf("create dbpath: %w", err)
	}
	spec.LogPath = r.dir + "/" + name + ".log"
	started := r.cfg.StartOptions
	started.Owner = r
	hs, err := hostctl.Start(ctx, spec, started)
	if err != nil {
		return nil, err
	}
	s := &Server{run: r, Name: name, hs: hs, uri: hs.URI()}
	r.addServer(s)
	r.recordServer(ctx, s)
	r.Eventf("info", name, "started %s %s on %s (pid %d, dbpath %s)", spec.Binary, s.Build().Version, hs.URI(), hs.PID(), spec.DBPath)
	r.sampler.watch(s)
	return s, nil
}

// ConnectServer attaches to a running server by URI (mongod.connect): one
// loopback host, connected to directly, within timeout (0: 5 s); see
// connectDirect.
func (r *Run) ConnectServer(ctx context.Context, uri string, timeout time.Duration) (*Server, error) {
	client, err := r.connectDirect(ctx, uri, timeout)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	name := fmt.Sprintf("m%d", len(r.servers)+1)
	r.mu.Unlock()
	s := &Server{run: r, Name: name, attached: client, uri: uri}
	r.addServer(s)
	r.recordServer(ctx, s)
	bi := s.Build()
	r.Eventf("info", name, "attached to %s: version %s (gitVersion %s); not started by wtd, so it is never restarted or stopped", redact(uri), orUnknown(bi.Version), orUnknown(bi.GitVersion))
	r.sampler.watch(s)
	return s, nil
}

// Client returns the current driver client (a restart replaces it).
func (s *Server) Client() *mongo.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs != nil {
		return s.hs.Client()
	}
	return s.attached
}

// URI returns how wtd reaches the server (password masked).
func (s *Server) URI() string { return redact(s.uri) }

// PID returns the server's process id, 0 when attached.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil || s.down {
		return 0
	}
	return s.hs.PID()
}

// Started reports whether wtd started the process (it can be restarted).
func (s *Server) Started() bool { return s.hs != nil }

// available reports whether the server is up (not in a restart gap).
func (s *Server) available() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.down
}

// Spec returns the settings the server was last started with.
func (s *Server) Spec() (hostctl.ServerSpec, bool) {
	if s.hs == nil {
		return hostctl.ServerSpec{}, false
	}
	return s.hs.Spec(), true
}

// Restart stops the server and starts it again on the same dbpath and port
// with changes applied; the settings are checked before anything stops.
func (s *Server) Restart(ctx context.Context, ch ServerChanges) error {
	if s.svc != nil {
		return s.restartService(ctx, ch)
	}
	if s.hs == nil {
		return ErrAttached
	}
	spec := s.hs.Spec()
	spec.Settings = ch.Apply(spec.Settings)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("restart %s: %w", s.Name, err)
	}
	s.mu.Lock()
	s.down = true
	s.mu.Unlock()
	s.run.Eventf("info", s.Name, "restarting with %s", spec.Settings.Text())
	err := s.hs.Restart(ctx, spec)
	s.mu.Lock()
	if err == nil {
		s.down = false
		s.restarts++
		s.wtRuntime = nil
		s.uri = s.hs.URI()
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("restart %s: %w", s.Name, err)
	}
	s.run.recordServer(ctx, s)
	s.run.sampler.watch(s)
	return nil
}

// Stop shuts the server down (graceful, then signals). Attached servers are
// only disconnected.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.down {
		s.mu.Unlock()
		return nil
	}
	s.down = true
	s.mu.Unlock()
	if s.hs == nil {
		return s.attached.Disconnect(ctx)
	}
	s.run.Eventf("info", s.Name, "stopping")
	return s.hs.Stop(ctx)
}

// crashed returns an error with the log tail when the process ended by
// itself.
func (s *Server) crashed() error {
	if s.hs == nil {
		return nil
	}
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		return nil
	}
	select {
	case <-s.hs.Exited():
		return fmt.Errorf("%s exited unexpectedly: %v", s.Name, s.hs.ExitErr())
	default:
		return nil
	}
}

// Command runs a command on the admin database and returns its reply.
func (s *Server) Command(ctx context.Context, cmd bson.D) (bson.Raw, error) {
	return s.CommandDB(ctx, "admin", cmd)
}

// CommandDB runs a command on db. A command the sandbox refuses
// (hostctl.CheckCommand) never reaches the server.
func (s *Server) CommandDB(ctx context.Context, db string, cmd bson.D) (bson.Raw, error) {
	if err := hostctl.CheckCommand(cmd); err != nil {
		return nil, err
	}
	raw, err := s.Client().Database(db).RunCommand(ctx, cmd).Raw()
	if err != nil {
		if cerr := s.crashed(); cerr != nil {
			return nil, fmt.Errorf("%w; last log lines:\n%s", cerr, s.logTail())
		}
		return nil, err
	}
	return raw, nil
}

func (s *Server) logTail() string {
	if s.hs == nil {
		return ""
	}
	out := ""
	for _, l := range s.hs.LogTail(15) {
		out += "  " + l + "\n"
	}
	return out
}

// ServerStatus returns the full serverStatus document.
func (s *Server) ServerStatus(ctx context.Context) (bson.Raw, error) {
	return s.Command(ctx, bson.D{{Key: "serverStatus", Value: 1}})
}

// SetParameter sets a server parameter at runtime and returns the previous
// value.
func (s *Server) SetParameter(ctx context.Context, name string, value any) (any, error) {
	return s.SetParameterKeep(ctx, name, value, false)
}

// SetParameterKeep is SetParameter; on a server wtd did not start
// (attached, or a service) the value before is read and recorded first,
// and set back at the end of the run unless keep. A parameter the sandbox
// refuses (hostctl.CheckParameter) is neither read nor set.
func (s *Server) SetParameterKeep(ctx context.Context, name string, value any, keep bool) (any, error) {
	if err := hostctl.CheckParameter(name, value); err != nil {
		return nil, fmt.Errorf("setParameter %w", err)
	}
	if s.hs == nil {
		before, err := s.GetParameter(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("setParameter %s: read the value before the change: %w", name, err)
		}
		if err := s.recordParameter(ctx, name, before, value, keep); err != nil {
			return nil, err
		}
	}
	return s.setParameter(ctx, name, value)
}

func (s *Server) setParameter(ctx context.Context, name string, value any) (any, error) {
	raw, err := s.Command(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: value}})
	if err != nil {
		return nil, fmt.Errorf("setParameter %s: %w", name, err)
	}
	s.run.Eventf("info", s.Name, "setParameter %s=%v", name, value)
	if cfg, ok := value.(string); ok && strings.EqualFold(name, "wiredTigerEngineRuntimeConfig") {
		s.noteRuntimeWT(cfg)
	}
	was, err := raw.LookupErr("was")
	if err != nil {
		return nil, nil
	}
	return rawToGo(was), nil
}

// GetParameter returns a server parameter's value.
func (s *Server) GetParameter(ctx context.Context, name string) (any, error) {
	raw, err := s.Command(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}})
	if err != nil {
		return nil, fmt.Errorf("getParameter %s: %w", name, err)
	}
	v, err := raw.LookupErr(name)
	if err != nil {
		return nil, fmt.Errorf("getParameter %s: not in the reply", name)
	}
	return rawToGo(v), nil
}

// Reconfigure changes WiredTiger's runtime configuration
// (wiredTigerEngineRuntimeConfig).
func (s *Server) Reconfigure(ctx context.Context, cfg string) error {
	return s.ReconfigureKeep(ctx, cfg, false)
}

// ReconfigureKeep is Reconfigure; on a server wtd did not start, the
// values before of the keys cfg sets are worked out and recorded first
// (see reconfigureBefore), and set back at the end of the run unless keep.
// A string the sandbox refuses (hostctl.CheckWTConfig), or that sets a
// knob out of its range (hostctl.CheckWTKnobs), is never sent.
func (s *Server) ReconfigureKeep(ctx context.Context, cfg string, keep bool) error {
	const name = "wiredTigerEngineRuntimeConfig"
	if err := hostctl.CheckWTConfig(cfg); err != nil {
		return fmt.Errorf("reconfigure: %w", err)
	}
	if err := hostctl.CheckWTKnobs(cfg); err != nil {
		return fmt.Errorf("reconfigure: %w", err)
	}
	if s.hs == nil {
		before, err := s.reconfigureBefore(ctx, cfg)
		if err != nil && !keep {
			return fmt.Errorf("reconfigure %q: %w", cfg, err)
		}
		if err := s.recordParameter(ctx, name, before, cfg, keep); err != nil {
			return err
		}
	}
	_, err := s.setParameter(ctx, name, cfg)
	return err
}

// noteRuntimeWT counts the knobs of a configuration string the server
// took at runtime.
func (s *Server) noteRuntimeWT(cfg string) {
	vals, err := hostctl.WTKnobValues(cfg)
	if err != nil || len(vals) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wtRuntime == nil {
		s.wtRuntime = map[string]float64{}
	}
	for k, v := range vals {
		s.wtRuntime[k] = v
	}
}

// RuntimeWTKnobs are the WiredTiger knobs (by knob name) this run has set
// on the server at runtime since its process last started: with the
// startup configuration they give the values in force.
func (s *Server) RuntimeWTKnobs() map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]float64, len(s.wtRuntime))
	for k, v := range s.wtRuntime {
		out[k] = v
	}
	return out
}

// rawToGo converts a BSON value to plain Go values (documents as ordered
// bson.D).
func rawToGo(v bson.RawValue) any {
	var out any
	if err := v.Unmarshal(&out); err != nil {
		return v.String()
	}
	return out
}

// startCount is how many times wtd started the process (1 + restarts); 0
// for a server it attached to.
func (s *Server) startCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil {
		return 0
	}
	return 1 + s.restarts
}

// CollectionStats returns the document count and average document size of
// ns ("db.coll") from collStats.
func (s *Server) CollectionStats(ctx context.Context, ns string) (count int64, avgObjSize float64, err error) {
	db, coll, ok := strings.Cut(ns, ".")
	if !ok || db == "" || coll == "" {
		return 0, 0, fmt.Errorf("namespace %q: want \"db.collection\"", ns)
	}
	cs, err := s.CommandDB(ctx, db, bson.D{{Key: "collStats", Value: coll}})
	if err != nil {
		return 0, 0, fmt.Errorf("collStats %s: %w", ns, err)
	}
	count = lookupInt(cs, "count")
	if v, err := cs.LookupErr("avgObjSize"); err == nil {
		avgObjSize, _ = v.AsFloat64OK()
		if avgObjSize == 0 {
			avgObjSize = float64(lookupInt(cs, "avgObjSize"))
		}
	}
	return count, avgObjSize, nil
}

// BuildInfo is what a server says of its build.
type BuildInfo struct {
	Version    string `json:"version"`
	GitVersion string `json:"git_version"`
}

// BuildInfo asks the server for its version and gitVersion (buildInfo).
func (s *Server) BuildInfo(ctx context.Context) (BuildInfo, error) {
	raw, err := s.Command(ctx, bson.D{{Key: "buildInfo", Value: 1}})
	if err != nil {
		return BuildInfo{}, fmt.Errorf("buildInfo: %w", err)
	}
	var bi BuildInfo
	if v, err := raw.LookupErr("version"); err == nil {
		bi.Version, _ = v.StringValueOK()
	}
	if v, err := raw.LookupErr("gitVersion"); err == nil {
		bi.GitVersion, _ = v.StringValueOK()
	}
	return bi, nil
}

// record stores what the run knows of s: started or attached, its URI,
// binary, buildInfo and pid. A server that does not answer buildInfo is
// recorded with an empty version and a warning: the record never guesses.
func (r *Run) recordServer(ctx context.Context, s *Server) {
	bi, err := s.BuildInfo(ctx)
	if err != nil {
		r.Eventf("warn", s.Name, "server version unknown: %v", err)
	}
	rec := store.ServerRecord{Name: s.Name, Started: s.Started(), URI: s.URI(), Version: bi.Version, GitVersion: bi.GitVersion, PID: s.PID()}
	if spec, ok := s.Spec(); ok {
		rec.Binary = spec.Binary
	}
	s.mu.Lock()
	s.build = bi
	s.mu.Unlock()
	if err := r.cfg.Store.AddServer(ctx, r.ID, rec); err != nil {
		r.Eventf("error", s.Name, "record server: %v", err)
	}
}

// Build returns the server's buildInfo as last read.
func (s *Server) Build() BuildInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.build
}
