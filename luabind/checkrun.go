package luabind

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/autotune"
	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// checkRun is wtd check's stand-in for the engine: each call checks its
// arguments as the engine does before it acts (the same functions:
// hostctl.ServerSpec.Validate, workload.Prepare, workload.CheckLoadSpec,
// engine.IndexSpec.Check, ...) and returns a result of the engine's shape
// with nothing measured, without starting, contacting or writing anything.
// Time is the check's own (checkClock): sleep and workloads bounded by a
// duration move it on at once.
type checkRun struct {
	clock  *checkClock
	cancel context.CancelCauseFunc

	servers    []*standInServer
	loads      workload.Loads
	steps      []record.StepRecord
	thresholds []record.Threshold
	params     map[string]any
	calls      []CheckedCall
	drops      int
	tables     int
}

// checkClock is the time a check's playbook sees (os.time, os.date): the
// real time at the start plus what it slept and what its workloads would
// have lasted.
type checkClock struct {
	mu     sync.Mutex
	start  time.Time
	passed time.Duration
}

func (c *checkClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start.Add(c.passed)
}

func (c *checkClock) advance(d time.Duration) {
	c.mu.Lock()
	c.passed += d
	c.mu.Unlock()
}

// Elapsed is how much time the playbook would have taken at least: its
// sleeps and the durations of its workloads.
func (c *checkClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.passed
}

// assumedDocs and assumedDocBytes are what a check takes a collection to
// hold that it cannot see: one on a server it did not start, or one given
// a dbpath that may hold data already.
const (
	assumedDocs     = 1_000_000
	assumedDocBytes = 1000
)

func (r *checkRun) newName() string { return fmt.Sprintf("m%d", len(r.servers)+1) }

func (r *checkRun) StartServer(_ context.Context, opts engine.ServerOptions) (server, error) {
	name := r.newName()
	spec := hostctl.ServerSpec{Binary: "mongod", DBPath: opts.DBPath, Port: opts.Port, BindIP: hostctl.DefaultBindIP, Settings: opts.Settings}
	if spec.DBPath == "" {
		spec.DBPath = name + "-db" // in the run's directory
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	s := &standInServer{run: r, n: name, kind: "start", uri: "mongodb://127.0.0.1/ (not started: wtd check)", settings: spec.Settings,
		spec: spec, first: spec.Settings.Text(), fresh: opts.DBPath == "", colls: map[string]*checkColl{}, params: map[string]any{}}
	for k, v := range spec.Settings.SetParameters {
		s.params[k] = parameterValue(v)
	}
	r.servers = append(r.servers, s)
	return s, nil
}

func (r *checkRun) ConnectServer(_ context.Context, uri string, timeout time.Duration) (server, error) {
	if _, err := hostctl.CheckURI(uri); err != nil {
		return nil, err
	}
	s := &standInServer{run: r, n: r.newName(), kind: "connect", uri: store.RedactURI(uri), colls: map[string]*checkColl{}, params: map[string]any{}}
	r.servers = append(r.servers, s)
	return s, nil
}

func (r *checkRun) ServiceServer(_ context.Context, o engine.ServiceOptions) (server, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	s := &standInServer{run: r, n: r.newName(), kind: "service", uri: store.RedactURI(o.URI), unit: o.Unit, config: o.Config,
		colls: map[string]*checkColl{}, params: map[string]any{}}
	r.servers = append(r.servers, s)
	return s, nil
}

func (r *checkRun) DefaultServer() server {
	var running []*standInServer
	for _, s := range r.servers {
		if !s.down {
			running = append(running, s)
		}
	}
	if len(running) == 1 {
		return running[0]
	}
	return nil
}

func (r *checkRun) Loads() *workload.Loads { return &r.loads }

func (r *checkRun) Step(ctx context.Context, spec stepSpec, fn func(context.Context) (any, error)) error {
	if spec.Name == "" {
		return errors.New("step: name is required")
	}
	rec := record.StepRecord{Name: spec.Name, Labels: spec.Labels, Start: r.clock.now(), Status: record.StatusOK}
	result, err := fn(ctx)
	rec.End, rec.Result = r.clock.now(), result
	if err != nil {
		rec.Status, rec.Error = record.StatusFailed, err.Error()
	}
	rec.Seq = len(r.steps) + 1
	r.steps = append(r.steps, rec)
	return err
}

func (r *checkRun) Steps() []record.StepRecord { return append([]record.StepRecord(nil), r.steps...) }

// SweepThreads checks the thread counts as the engine does and runs the
// stand-in workload once per count, each in its step.
func (r *checkRun) SweepThreads(ctx context.Context, s server, spec workload.Spec, opt engine.SweepOptions) (workload.SweepResult, error) {
	if err := opt.Check(); err != nil {
		return workload.SweepResult{}, err
	}
	if opt.Duration > 0 {
		spec.Duration = opt.Duration
	}
	var res workload.SweepResult
	for _, n := range opt.Threads {
		labels := map[string]any{"threads": n}
		for k, v := range opt.Labels {
			labels[k] = v
		}
		spec.Threads = n
		err := r.Step(ctx, stepSpec{Name: opt.StepName(), Labels: labels, Server: s, NS: spec.NS}, func(ctx context.Context) (any, error) {
			return s.Workload(ctx, spec, nil)
		})
		if err != nil {
			return res, fmt.Errorf("sweep threads: %d threads: %w", n, err)
		}
		res.Points = append(res.Points, workload.SweepPoint{Threads: n})
	}
	knee, ok, reason, err := workload.Knee(res.Points)
	if err != nil {
		return res, fmt.Errorf("sweep threads: %w", err)
	}
	if ok {
		res.Knee = &knee
	}
	res.Reason = reason
	return res, nil
}

func (r *checkRun) RecordTable(record.ReportOptions, int) { r.tables++ }

func (r *checkRun) DropCaches(context.Context) hostctl.DropResult {
	r.drops++
	return hostctl.DropResult{Reason: "wtd check drops no caches"}
}

// Dir is empty: a check has no run directory.
func (r *checkRun) Dir() string { return "" }

func (r *checkRun) Eventf(string, string, string, ...any) {}

func (r *checkRun) Output(string) {}

func (r *checkRun) SetParams(_ context.Context, params map[string]any) error {
	r.params = params
	return nil
}

func (r *checkRun) AddThreshold(t record.Threshold) { r.thresholds = append(r.thresholds, t) }

func (r *checkRun) Abort(cause error) { r.cancel(cause) }

// CheckTune checks the search as the engine does (autotune.CheckFor).
func (r *checkRun) CheckTune(s server, cfg autotune.Config) error {
	cs := s.(*standInServer)
	_, err := autotune.CheckFor(cfg, cs.n, cs.kind != "connect")
	if err == nil {
		err = cs.up("tune")
	}
	return err
}

// Tune returns a search's result of its shape with no trial measured; the
// clock moves on by the trials, the baseline and the confirmation rounds.
func (r *checkRun) Tune(_ context.Context, s server, cfg autotune.Config) (*autotune.Result, error) {
	p, err := workload.Prepare(cfg.Workload)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	runs := cfg.Budget.Trials + 1 + 2*cfg.Confirm
	r.clock.advance(time.Duration(runs) * p.Bound())
	cs := s.(*standInServer)
	r.note(cs, "tune", cfg.Workload.NS, fmt.Sprintf("%d trials, %d knobs, %s", cfg.Budget.Trials, len(cfg.Knobs), describeWorkload(p.Spec())))
	return &autotune.Result{Search: 1, Measure: cfg.Objective.Measure, Baseline: map[string]float64{},
		Trials: []record.TuneTrial{}, Confirm: []record.TuneTrial{}, Verdict: "not measured: wtd check runs no trial"}, nil
}

// standInServer is a server of a check: nothing runs behind it.
type standInServer struct {
	run  *checkRun
	n    string
	kind string // "start", "connect" or "service"
	uri  string
	// settings and spec are a started server's.
	settings     hostctl.Settings
	spec         hostctl.ServerSpec
	first        string // the settings it starts with (Settings.Text)
	unit, config string // a service's
	// fresh is a started server on a new dbpath: it holds no data.
	fresh    bool
	down     bool
	restarts int
	params   map[string]any
	colls    map[string]*checkColl
}

// checkColl is what the check's loads put in a collection.
type checkColl struct {
	docs, bytes int64
}

func (s *standInServer) name() string  { return s.n }
func (s *standInServer) URI() string   { return s.uri }
func (s *standInServer) PID() int      { return 0 }
func (s *standInServer) Started() bool { return s.kind == "start" }

// up returns an error when the server was stopped.
func (s *standInServer) up(what string) error {
	if s.down {
		return fmt.Errorf("%s: server %s was stopped with m:stop", what, s.n)
	}
	return nil
}

func (s *standInServer) Restart(_ context.Context, ch engine.ServerChanges) error {
	switch s.kind {
	case "connect":
		return engine.ErrAttached
	case "service":
		if err := ch.CheckService(s.n); err != nil {
			return err
		}
	default:
		spec := s.spec
		spec.Settings = ch.Apply(spec.Settings)
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("restart %s: %w", s.n, err)
		}
		s.spec, s.settings = spec, spec.Settings
	}
	s.down = false
	s.restarts++
	return nil
}

func (s *standInServer) Stop(context.Context) error {
	s.down = true
	return nil
}

func (s *standInServer) SetParameterKeep(_ context.Context, name string, value any, _ bool) (any, error) {
	if err := hostctl.CheckParameter(name, value); err != nil {
		return nil, fmt.Errorf("setParameter %w", err)
	}
	if err := s.up("setParameter " + name); err != nil {
		return nil, err
	}
	was := s.parameter(name)
	s.params[name] = value
	return was, nil
}

// parameterValue is a --setParameter value as the server would give it
// back: a boolean, a number or a string.
func parameterValue(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	if f, ok := parseLuaNumber(v); ok {
		return bsonNumber(f)
	}
	return v
}

// parameter is the value a check knows a parameter has (set by the
// playbook), else 0: a check asks no server.
func (s *standInServer) parameter(name string) any {
	if v, ok := s.params[name]; ok {
		return v
	}
	return int32(0)
}

func (s *standInServer) GetParameter(_ context.Context, name string) (any, error) {
	if err := s.up("getParameter " + name); err != nil {
		return nil, err
	}
	return s.parameter(name), nil
}

func (s *standInServer) ReconfigureKeep(_ context.Context, cfg string, _ bool) error {
	if err := hostctl.CheckWTConfig(cfg); err != nil {
		return fmt.Errorf("reconfigure: %w", err)
	}
	if err := hostctl.CheckWTKnobs(cfg); err != nil {
		return fmt.Errorf("reconfigure: %w", err)
	}
	return s.up("reconfigure")
}

func (s *standInServer) ServerStatus(context.Context) (bson.Raw, error) {
	if err := s.up("serverStatus"); err != nil {
		return nil, err
	}
	return checkStatus()
}

func (s *standInServer) PlaybookCommand(_ context.Context, _ string, cmd bson.D) (bson.Raw, error) {
	if len(cmd) == 0 {
		return nil, errors.New("an empty command document names no command")
	}
	if err := hostctl.CheckCommand(cmd); err != nil {
		return nil, err
	}
	if err := s.up(cmd[0].Key); err != nil {
		return nil, err
	}
	if cmd[0].Key == "serverStatus" {
		return checkStatus()
	}
	return bson.Marshal(bson.D{{Key: "ok", Value: 1.0}})
}

// CollectionStats is what the check's loads put in ns; a collection the
// check cannot see (on a server it did not start, or on a given dbpath)
// is taken to hold assumedDocs documents of assumedDocBytes.
func (s *standInServer) CollectionStats(_ context.Context, ns string) (int64, float64, error) {
	if _, _, err := workload.SplitNS(ns); err != nil {
		return 0, 0, fmt.Errorf("namespace %q: want \"db.collection\"", ns)
	}
	if err := s.up("collStats " + ns); err != nil {
		return 0, 0, err
	}
	c, ok := s.colls[ns]
	switch {
	case ok && c.docs > 0:
		return c.docs, float64(c.bytes) / float64(c.docs), nil
	case ok || s.fresh:
		return 0, 0, nil
	}
	return assumedDocs, assumedDocBytes, nil
}

func (s *standInServer) Load(_ context.Context, spec workload.LoadSpec, _ func(done, total int64)) (workload.LoadResult, error) {
	spec, err := workload.CheckLoadSpec(spec)
	if err != nil {
		return workload.LoadResult{}, err
	}
	if err := s.up("load " + spec.NS); err != nil {
		return workload.LoadResult{}, err
	}
	c := s.coll(spec.NS)
	c.docs += spec.Docs
	c.bytes += spec.Docs * int64(spec.DocBytes)
	s.run.loads.Note(spec)
	s.run.note(s, "load", spec.NS, fmt.Sprintf("%d documents of %d bytes, %d threads", spec.Docs, spec.DocBytes, spec.Threads))
	return workload.UnrunLoadResult(spec), nil
}

func (s *standInServer) coll(ns string) *checkColl {
	c, ok := s.colls[ns]
	if !ok {
		c = &checkColl{}
		if !s.fresh {
			c.docs, c.bytes = assumedDocs, assumedDocs*assumedDocBytes
		}
		s.colls[ns] = c
	}
	return c
}

func (s *standInServer) Workload(_ context.Context, spec workload.Spec, _ func(done, total int64)) (workload.Result, error) {
	p, err := workload.Prepare(spec)
	if err != nil {
		return workload.Result{}, err
	}
	if err := s.up("run workload " + spec.NS); err != nil {
		return workload.Result{}, err
	}
	s.run.clock.advance(p.Bound())
	s.run.note(s, "workload", spec.NS, describeWorkload(p.Spec()))
	return p.Unrun(), nil
}

func (s *standInServer) CreateIndex(_ context.Context, spec engine.IndexSpec) (string, error) {
	name, err := spec.Check()
	if err != nil {
		return "", err
	}
	if err := s.up("create index " + name); err != nil {
		return "", err
	}
	return name, nil
}

// describeWorkload words a checked workload for the summary.
func describeWorkload(s workload.Spec) string {
	bound := fmt.Sprintf("%d ops", s.Ops)
	if s.Duration > 0 {
		bound = s.Duration.String()
		if s.Ops > 0 {
			bound += fmt.Sprintf(" or %d ops", s.Ops)
		}
	}
	mix := s.Workload
	if mix == "" {
		var parts []string
		for _, op := range []struct {
			name string
			w    float64
		}{{workload.OpRead, s.Mix.Read}, {workload.OpUpdate, s.Mix.Update}, {workload.OpInsert, s.Mix.Insert},
			{workload.OpScan, s.Mix.Scan}, {workload.OpRMW, s.Mix.RMW}, {workload.OpQuery, s.Mix.Query}} {
			if op.w > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", op.name, formatNumber(op.w)))
			}
		}
		sort.Strings(parts)
		mix = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s, %d threads, %s", bound, s.Threads, mix)
}

// note adds a load or workload to the check's calls, or counts it again.
func (r *checkRun) note(s *standInServer, kind, ns, detail string) {
	for i := range r.calls {
		c := &r.calls[i]
		if c.Server == s.n && c.Kind == kind && c.NS == ns && c.Detail == detail {
			c.Count++
			return
		}
	}
	r.calls = append(r.calls, CheckedCall{Server: s.n, Kind: kind, NS: ns, Detail: detail, Count: 1})
}

//go:embed checkstatus.json
var checkStatusJSON []byte

var checkStatus = sync.OnceValues(func() (bson.Raw, error) {
	var doc bson.D
	if err := bson.UnmarshalExtJSON(checkStatusJSON, false, &doc); err != nil {
		return nil, fmt.Errorf("serverStatus stand-in: %w", err)
	}
	return bson.Marshal(zeroNumbers(doc))
})

// zeroNumbers sets every number and date of doc to 0: the check's
// serverStatus has the fields of a real one (minimongod's) and no values.
func zeroNumbers(v any) any {
	switch x := v.(type) {
	case bson.D:
		for i := range x {
			x[i].Value = zeroNumbers(x[i].Value)
		}
		return x
	case bson.A:
		for i := range x {
			x[i] = zeroNumbers(x[i])
		}
		return x
	case int32:
		return int32(0)
	case int64:
		return int64(0)
	case float64:
		return 0.0
	case bson.DateTime:
		return bson.DateTime(0)
	}
	return v
}
