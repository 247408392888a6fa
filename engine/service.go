package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/mongodconf"
	"wtd/engine/store"
	"wtd/hostctl"
)

// DefaultServiceTimeout bounds the service manager's restart and the wait
// for the server to answer again.
const DefaultServiceTimeout = 120 * time.Second

// ServiceOptions name a server run by a service manager (mongod.service).
type ServiceOptions struct {
	Unit   string
	Config string // its YAML config file
	URI    string
	// Manager is the service manager's command; "restart UNIT" is
	// appended. Empty: systemctl.
	Manager []string
	// Timeout bounds a restart and the wait for the server (0: 120 s).
	Timeout time.Duration
}

// service is what a Server run by a service manager carries.
type service struct {
	ServiceOptions
	// configChanged is set once the run has saved the original config.
	configChanged bool
}

// restoreInfo is how to put a change back (the changes.restore column).
type restoreInfo struct {
	URI      string   `json:"uri"`
	Unit     string   `json:"unit,omitempty"`
	Manager  []string `json:"service_manager,omitempty"`
	TimeoutS float64  `json:"timeout_s,omitempty"`
	File     *mongodconf.Owner
}

// ErrServiceNotAllowed is returned by ServiceServer for a unit the
// operator did not allow.
var ErrServiceNotAllowed = errors.New("service not allowed")

// ServiceServer attaches to a server a service manager runs, which the run
// may restart with config file changes (mongod.service). The unit must be
// one the operator allowed (wtd run --allow-service, the daemon's
// services:).
func (r *Run) ServiceServer(ctx context.Context, o ServiceOptions) (*Server, error) {
	if err := o.checkUnit(); err != nil {
		return nil, err
	}
	if !slices.Contains(r.cfg.AllowServices, o.Unit) {
		return nil, fmt.Errorf("%w: mongod.service unit %s: a playbook may restart a system service only when the operator allows it (wtd run --allow-service %s, or the daemon config's services: list)", ErrServiceNotAllowed, o.Unit, o.Unit)
	}
	if len(o.Manager) == 0 {
		o.Manager = []string{"systemctl"}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultServiceTimeout
	}
	if err := o.checkConfig(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(o.Config)
	if err != nil {
		return nil, fmt.Errorf("mongod.service: read the config: %w", err)
	}
	if _, err := mongodconf.Parse(data); err != nil {
		return nil, fmt.Errorf("mongod.service: %w", err)
	}
	client, err := r.connectDirect(ctx, o.URI, 0)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	name := fmt.Sprintf("m%d", len(r.servers)+1)
	r.mu.Unlock()
	s := &Server{run: r, Name: name, attached: client, uri: o.URI, svc: &service{ServiceOptions: o}}
	r.addServer(s)
	r.recordServer(ctx, s)
	r.Eventf("info", name, "attached to service %s (config %s) at %s: version %s; restarts go through %s, and what the run changes is put back at its end",
		o.Unit, o.Config, redact(o.URI), orUnknown(s.Build().Version), strings.Join(o.Manager, " "))
	r.sampler.watch(s)
	return s, nil
}

// Check checks the options as ServiceServer does before it reads or
// reaches anything: the unit's name, the config's path and the URI
// (hostctl.CheckURI). Whether the operator allows the unit, the config
// file and the server are left to ServiceServer.
func (o ServiceOptions) Check() error {
	if err := o.checkUnit(); err != nil {
		return err
	}
	if err := o.checkConfig(); err != nil {
		return err
	}
	_, err := hostctl.CheckURI(o.URI)
	return err
}

func (o ServiceOptions) checkUnit() error {
	if o.Unit == "" || strings.HasPrefix(o.Unit, "-") || strings.ContainsAny(o.Unit, " /\n") {
		return fmt.Errorf("mongod.service: unit %q: want a unit name such as \"mongod\"", o.Unit)
	}
	return nil
}

func (o ServiceOptions) checkConfig() error {
	if !filepath.IsAbs(o.Config) {
		return fmt.Errorf("mongod.service: config %q: want an absolute path", o.Config)
	}
	return nil
}

// CheckService checks a restart of the service server named server as
// Restart does before it reads the config file: no args, something to
// change, and each setting changed within its knob's bounds.
func (ch ServerChanges) CheckService(server string) error {
	if ch.Gives(hostctl.OptionArgs) {
		return fmt.Errorf("restart %s: args cannot be given to a service (its command line is the unit's)", server)
	}
	if len(editsFor(ch)) == 0 {
		return fmt.Errorf("restart %s: nothing to change (%s)", server, hostctl.SettingOptionsOr())
	}
	if err := ch.Apply(hostctl.Settings{}).Check(); err != nil {
		return fmt.Errorf("restart %s: the new config: %w", server, err)
	}
	return nil
}

// Service reports whether the server is run by a service manager.
func (s *Server) Service() bool { return s.svc != nil }

// restartService edits the service's config file, restarts it through its
// service manager and waits for it. The original file is saved (run
// directory and results database) before the first change. A server that
// does not come back within the timeout is put back as it was, and the
// error carries its journal or log lines.
func (s *Server) restartService(ctx context.Context, ch ServerChanges) error {
	r, svc := s.run, s.svc
	if err := ch.CheckService(s.Name); err != nil {
		return err
	}
	edits := editsFor(ch)
	cur, err := os.ReadFile(svc.Config)
	if err != nil {
		return fmt.Errorf("restart %s: read the config: %w", s.Name, err)
	}
	owner, err := mongodconf.StatOwner(svc.Config)
	if err != nil {
		return fmt.Errorf("restart %s: %w", s.Name, err)
	}
	next, err := mongodconf.Apply(cur, edits)
	if err != nil {
		return fmt.Errorf("restart %s: %w", s.Name, err)
	}
	settings, err := mongodconf.Settings(next)
	if err == nil {
		err = settings.Check()
	}
	if err != nil {
		return fmt.Errorf("restart %s: the new config: %w", s.Name, err)
	}
	change, _ := json.Marshal(edits)
	info, _ := json.Marshal(restoreInfo{URI: redact(svc.URI), Unit: svc.Unit, Manager: svc.Manager, TimeoutS: svc.Timeout.Seconds(), File: &owner})
	rec := store.Change{RunID: r.ID, Server: s.Name, Kind: store.ChangeConfig, Target: svc.Config,
		Change: string(change), Restore: string(info), Keep: ch.Keep}
	if !svc.configChanged {
		rec.Original = cur
		saved := filepath.Join(r.dir, s.Name+"-original-"+filepath.Base(svc.Config))
		if err := os.WriteFile(saved, cur, 0o600); err != nil {
			return fmt.Errorf("restart %s: save the original config: %w", s.Name, err)
		}
	}
	if _, err := r.cfg.Store.AddChange(ctx, rec); err != nil {
		return fmt.Errorf("restart %s: record the change before making it: %w", s.Name, err)
	}
	svc.configChanged = true
	if err := mongodconf.WriteAs(svc.Config, next, owner); err != nil {
		return fmt.Errorf("restart %s: %w", s.Name, err)
	}
	what := make([]string, len(edits))
	for i, e := range edits {
		what[i] = e.Key + "=" + e.Value
	}
	keep := ""
	if ch.Keep {
		keep = " (keep = true: it stays after the run)"
	}
	r.Eventf("info", s.Name, "config %s: %s%s; restarting %s", svc.Config, strings.Join(what, " "), keep, svc.Unit)
	s.mu.Lock()
	s.down = true // the sampler leaves it alone until it answers again
	s.mu.Unlock()
	err = s.serviceRestart(ctx)
	if err != nil {
		defer s.setUp()
		diag := serviceDiagnostics(ctx, svc.Unit, svc.Manager, next)
		r.Eventf("error", s.Name, "%v; putting the original config back", err)
		rerr := r.restoreMatching(context.WithoutCancel(ctx), func(c store.Change) bool {
			return c.Server == s.Name && c.Kind == store.ChangeConfig
		})
		msg := fmt.Sprintf("restart %s with %s: %v", s.Name, strings.Join(what, " "), err)
		if rerr != nil {
			msg += fmt.Sprintf("; putting it back failed too: %v", rerr)
		} else {
			msg += "; the original config was put back and the server restarted"
		}
		if diag != "" {
			msg += "\n" + diag
		}
		return errors.New(msg)
	}
	s.mu.Lock()
	s.restarts++
	s.down = false
	s.wtRuntime = nil
	s.mu.Unlock()
	r.recordServer(ctx, s)
	r.Eventf("info", s.Name, "in force after the restart: %s", s.inForce(ctx))
	return nil
}

// setUp marks the server available again (after a rollback).
func (s *Server) setUp() {
	s.mu.Lock()
	s.down = false
	s.mu.Unlock()
}

// serviceRestart runs "MANAGER... restart UNIT" and waits until the server
// answers as a new process, within the service's timeout.
func (s *Server) serviceRestart(ctx context.Context) error {
	return managerRestart(ctx, s.Client(), s.svc.Manager, s.svc.Unit, s.svc.Timeout)
}

func managerRestart(ctx context.Context, client *mongo.Client, manager []string, unit string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A server that is down answers nothing: do not wait long for it.
	bctx, bcancel := context.WithTimeout(ctx, 3*time.Second)
	before := serverPID(bctx, client)
	bcancel()
	args := append(append([]string(nil), manager[1:]...), "restart", unit)
	out, err := exec.CommandContext(ctx, manager[0], args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s restart %s: %v: %s", manager[0], unit, err, strings.TrimSpace(string(out)))
	}
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		pid := serverPID(pctx, client)
		pcancel()
		if pid != 0 && pid != before {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %s after the restart", unit, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serverPID tells server processes apart: serverStatus.pid, else (a
// server that does not report it) its start time in seconds from
// localTime - uptimeMillis; 0 when the server does not answer.
func serverPID(ctx context.Context, client *mongo.Client) int64 {
	raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Raw()
	if err != nil {
		return 0
	}
	if pid := lookupInt(raw, "pid"); pid != 0 {
		return pid
	}
	up := lookupInt(raw, "uptimeMillis")
	if lt, err := raw.LookupErr("localTime"); err == nil {
		if ms, ok := lt.DateTimeOK(); ok {
			return -((ms - up) / 1000) // negative: not to be taken for a pid
		}
	}
	return -1
}

// inForce words what the server says is in force: the options it parsed
// (getCmdLineOpts) at the config keys of the knobs' options, and the
// cache's size (serverStatus).
func (s *Server) inForce(ctx context.Context) string {
	var parts []string
	if raw, err := s.Command(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}); err == nil {
		for _, option := range hostctl.SettingOptions() {
			key := hostctl.OptionConfigKey(option)
			if v, err := parsedAt(raw, key); err == nil {
				parts = append(parts, key+" "+v.String())
			}
		}
	}
	if raw, err := s.ServerStatus(ctx); err == nil {
		if v, err := raw.LookupErr("wiredTiger", "cache", "maximum bytes configured"); err == nil {
			if f, ok := v.AsFloat64OK(); ok {
				parts = append(parts, fmt.Sprintf("cache maximum bytes configured %.0f", f))
			}
		}
	}
	if len(parts) == 0 {
		return "unknown (getCmdLineOpts and serverStatus did not say)"
	}
	return strings.Join(parts, ", ")
}

// serviceDiagnostics returns the unit's recent journal (journalctl -u UNIT
// -n 50, for systemctl units when journalctl is there) or the last 50 lines
// of the log file the config names.
func serviceDiagnostics(ctx context.Context, unit string, manager []string, config []byte) string {
	if filepath.Base(manager[0]) == "systemctl" {
		if path, err := exec.LookPath("journalctl"); err == nil {
			jctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			out, err := exec.CommandContext(jctx, path, "-u", unit, "-n", "50", "--no-pager").Output()
			cancel()
			if err == nil && len(strings.TrimSpace(string(out))) > 0 {
				return "journalctl -u " + unit + " -n 50:\n" + indent(string(out))
			}
		}
	}
	root, err := mongodconf.Parse(config)
	if err != nil {
		return ""
	}
	logPath := mongodconf.Value(root, keyLogPath)
	if logPath == "" {
		return ""
	}
	lines, err := lastLines(logPath, 50)
	if err != nil {
		return fmt.Sprintf("log %s: %v", logPath, err)
	}
	return "last lines of " + logPath + ":\n" + indent(strings.Join(lines, "\n"))
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// lastLines returns up to n last lines of a file (of its last 1 MB).
func lastLines(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 1<<20 {
		f.Seek(st.Size()-1<<20, 0)
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines, sc.Err()
}
