package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/hostctl"
)

// StepSpec names a recorded step. Server is the server whose settings and
// counters the step records (default: the run's only server); NS is the
// data set ("db.coll") its provenance describes (default: the last loaded).
// With several servers running, a step without Server records no server
// settings or deltas.
type StepSpec struct {
	Name   string
	Labels map[string]any
	Server *Server
	NS     string
}

// stepResults is what the store keeps as a step's results.
type stepResults struct {
	Result any                  `json:"result,omitempty"`
	Server *record.ServerDeltas `json:"server,omitempty"`
	Host   *record.HostLoad     `json:"host_load,omitempty"`
}

// Steps returns the run's finished steps in order.
func (r *Run) Steps() []record.StepRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record.StepRecord(nil), r.steps...)
}

// defaultServer is the server a step describes when it names none: the
// only one that is running.
func (r *Run) defaultServer() *Server {
	var running []*Server
	for _, s := range r.Servers() {
		if s.available() {
			running = append(running, s)
		}
	}
	if len(running) == 1 {
		return running[0]
	}
	return nil
}

// Step runs fn as a recorded step: the settings in force and the
// cache-state provenance at the start, fn's result, and the server-side
// deltas over the step, computed from the samples taken at its start and
// end (recorded with the others) and the peaks the sampler saw between. A
// failing fn fails the step (recorded) and the error is returned; what was
// recorded stays: when fn fails without a result, the result of the load or
// workload that failed in it is the step's.
//
// A step whose server goes down (see UnansweredWindow) fails, whatever fn
// returned: its error says how and when ("server m1 exited (killed by
// signal 9, SIGKILL) 3.1 s into the step") and its provenance has no
// verdict, for want of the counters at its end.
func (r *Run) Step(ctx context.Context, spec StepSpec, fn func(ctx context.Context) (any, error)) (record.StepRecord, error) {
	if spec.Name == "" {
		return record.StepRecord{}, errors.New("step: name is required")
	}
	srv := spec.Server
	if srv == nil {
		srv = r.defaultServer()
	}
	rec := record.StepRecord{Name: spec.Name, Labels: spec.Labels, Start: time.Now()}
	hostLoad := r.sampler.trackHost()
	defer r.sampler.untrackHost(hostLoad)
	var watch *downWatch
	var start stepStart
	if srv != nil && srv.available() {
		watch = srv.watchDown(ctx, "step", nil)
		defer watch.stop()
		start = r.startStep(ctx, srv, spec, &rec)
		if start.tracker != nil {
			defer r.sampler.untrack(start.tracker)
		}
	}
	settingsJSON, _ := json.Marshal(rec.Settings)
	provJSON, _ := json.Marshal(rec.Provenance)
	id, err := r.cfg.Store.CreateStep(ctx, store.StepInfo{RunID: r.ID, Name: spec.Name, Labels: spec.Labels, StartedAt: rec.Start,
		Settings: settingsJSON, Provenance: provJSON})
	if err != nil {
		return rec, fmt.Errorf("record step %s: %w", spec.Name, err)
	}
	rec.ID = id
	r.Eventf("info", "step", "%s started", stepTitle(spec))
	r.setCurrent(stepTitle(spec))
	defer r.setCurrent("")

	r.takePartial()
	result, ferr := fn(ctx)
	if ferr != nil && result == nil {
		result = r.takePartial() // a failed workload's figures
	}
	var down *ServerDownError
	if watch != nil {
		down = watch.stop()
	}
	if fd := (*ServerDownError)(nil); down == nil && errors.As(ferr, &fd) {
		down = fd // a load or workload saw it before the step's watch did
	}
	if down != nil {
		down = down.since(rec.Start, "step")
	}
	rec.End = time.Now()
	rec.Result = result
	rec.Host = hostLoad.load()
	if wu := workloadWarmup(result); wu != nil && rec.Provenance != nil {
		rec.Provenance.Warmup = wu.String() // what the workload did, over a label's word
	}
	if srv != nil && rec.Provenance != nil {
		r.endStep(ctx, srv, start, down, &rec)
	}
	rec.Status = record.StatusOK
	switch {
	case ferr != nil && ctx.Err() != nil:
		rec.Status, rec.Error = record.StatusAborted, context.Cause(ctx).Error()
	case down != nil:
		ferr = &stepDownError{down: down, err: ferr}
		rec.Status, rec.Error = record.StatusFailed, ferr.Error()
	case ferr != nil:
		rec.Status, rec.Error = record.StatusFailed, ferr.Error()
	}
	resJSON, jerr := json.Marshal(stepResults{Result: result, Server: rec.Server, Host: rec.Host})
	if jerr != nil {
		resJSON, _ = json.Marshal(stepResults{Result: fmt.Sprint(result), Server: rec.Server, Host: rec.Host})
	}
	provJSON, _ = json.Marshal(rec.Provenance)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.cfg.Store.FinishStep(fctx, id, store.StepResult{Status: rec.Status, Error: redact(rec.Error), EndedAt: rec.End,
		Results: resJSON, Provenance: provJSON}); err != nil && ferr == nil {
		ferr = fmt.Errorf("record step %s: %w", spec.Name, err)
	}
	r.mu.Lock()
	rec.Seq = len(r.steps) + 1
	r.steps = append(r.steps, rec)
	if srv != nil {
		r.restartsAt[srv] = srv.startCount()
	}
	r.mu.Unlock()
	if ferr != nil {
		r.Eventf("error", "step", "%s %s: %v", stepTitle(spec), rec.Status, ferr)
		return rec, ferr
	}
	r.Eventf("info", "step", "%s done in %s", stepTitle(spec), rec.End.Sub(rec.Start).Round(time.Millisecond))
	return rec, nil
}

// stepStart is what a step read of its server at its start: the counters
// (nil when serverStatus failed, with the error) and the peak tracker.
type stepStart struct {
	before  map[string]float64
	err     error
	tracker *peakTracker
}

// startStep reads the settings, provenance and counters of srv at the start
// of a step into rec and starts tracking the cache peaks.
func (r *Run) startStep(ctx context.Context, srv *Server, spec StepSpec, rec *record.StepRecord) stepStart {
	if st, err := srv.Settings(ctx); err == nil {
		rec.Settings = &st
	} else {
		r.Eventf("warn", "step", "%s: settings of %s: %v", spec.Name, srv.Name, err)
	}
	rec.Provenance = r.provenance(ctx, srv, spec)
	var start stepStart
	if start.before, start.err = srv.sampleStatus(ctx); start.err == nil {
		r.cfg.Store.AddSample(r.ID, "server:"+srv.Name, time.Now(), start.before)
	}
	start.tracker = r.sampler.track(srv, CacheMetric("bytes currently in the cache"), CacheMetric("tracked dirty bytes in the cache"))
	return start
}

// endStep reads the counters of srv at the end of a step, computes the
// deltas and completes the provenance's verdict. Without the counters at
// both ends there is no verdict, and the reason says why.
func (r *Run) endStep(ctx context.Context, srv *Server, start stepStart, down *ServerDownError, rec *record.StepRecord) {
	p := rec.Provenance
	switch {
	case start.before == nil:
		p.Verdict, p.Reason = record.VerdictUnknown, fmt.Sprintf("no counters at the start of the step (serverStatus: %v)", start.err)
		return
	case down != nil:
		quiet := *down
		quiet.Log = ""
		p.Verdict, p.Reason = record.VerdictUnknown, "no counters at the end of the step: "+quiet.Error()
		return
	case !srv.available():
		p.Verdict, p.Reason = record.VerdictUnknown, fmt.Sprintf("no counters at the end of the step: %s was stopped during it", srv.Name)
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	after, err := srv.sampleStatus(sctx)
	if err != nil {
		p.Verdict, p.Reason = record.VerdictUnknown, fmt.Sprintf("no counters at the end of the step (serverStatus: %v)", err)
		return
	}
	r.cfg.Store.AddSample(r.ID, "server:"+srv.Name, time.Now(), after)
	start.tracker.observe(start.before)
	start.tracker.observe(after)
	rec.Server = serverDeltas(start.before, after, start.tracker, rec.Result)
	r.finishProvenance(p, rec.Server, rec.End.Sub(rec.Start), rec.Result)
}

// stepDownError is the failure of a step whose server went down: how and
// when, then what the step's function made of it, unless that is the same
// news.
type stepDownError struct {
	down *ServerDownError
	err  error
}

func (e *stepDownError) Error() string {
	var same *ServerDownError
	if e.err == nil || errors.As(e.err, &same) {
		return e.down.Error()
	}
	return e.down.Error() + "; the step's function failed: " + e.err.Error()
}

// Unwrap returns the server's end and the function's error.
func (e *stepDownError) Unwrap() []error {
	if e.err == nil {
		return []error{e.down}
	}
	return []error{e.down, e.err}
}

func stepTitle(spec StepSpec) string { return record.StepTitle(spec.Name, spec.Labels) }

func (r *Run) setCurrent(title string) {
	r.mu.Lock()
	r.current = title
	r.mu.Unlock()
}

// CurrentStep returns the title of the step running now, or "".
func (r *Run) CurrentStep() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// Settings reads the settings in force from the server itself: the knobs
// where the table says to read them (getCmdLineOpts' parsed options, at
// their config keys), every parameter (getParameter) and the cache's size
// (serverStatus).
func (s *Server) Settings(ctx context.Context) (record.Settings, error) {
	var st record.Settings
	opts, err := s.Command(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}})
	if err != nil {
		return st, fmt.Errorf("getCmdLineOpts: %w", err)
	}
	if v, err := opts.LookupErr("argv"); err == nil {
		v.Unmarshal(&st.Argv)
	}
	if v, err := opts.LookupErr("parsed"); err == nil {
		st.Parsed = jsonable(v)
		st.Settings, _ = hostctl.ReadSettings(func(key string) (string, bool) { return parsedScalar(opts, key) }, nil)
	}
	if params, err := s.Command(ctx, bson.D{{Key: "getParameter", Value: "*"}}); err == nil {
		st.Parameters = map[string]any{}
		elems, _ := params.Elements()
		for _, el := range elems {
			if el.Key() != "ok" {
				st.Parameters[el.Key()] = jsonable(el.Value())
			}
		}
	}
	if status, err := s.ServerStatus(ctx); err == nil {
		if v, err := status.LookupErr("wiredTiger", "cache", "maximum bytes configured"); err == nil {
			st.CacheMaxBytes, _ = v.AsInt64OK()
		}
	}
	return st, nil
}

// parsedAt is the value at a dotted config key ("storage.syncPeriodSecs")
// of getCmdLineOpts' parsed options.
func parsedAt(opts bson.Raw, key string) (bson.RawValue, error) {
	return opts.LookupErr(append([]string{"parsed"}, strings.Split(key, ".")...)...)
}

// parsedScalar is the text of the number or string at a dotted config key
// of getCmdLineOpts' parsed options.
func parsedScalar(opts bson.Raw, key string) (string, bool) {
	v, err := parsedAt(opts, key)
	if err != nil {
		return "", false
	}
	if f, ok := v.AsFloat64OK(); ok {
		return strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return v.StringValueOK()
}

// jsonable converts a BSON value to plain values that encode as JSON.
func jsonable(v bson.RawValue) any {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil {
		return v.String()
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return v.String()
	}
	return m["v"]
}

// firstOf is f of the first name it has a value for.
func firstOf(f func(string) *float64, names []string) *float64 {
	for _, n := range names {
		if v := f(n); v != nil {
			return v
		}
	}
	return nil
}

func serverDeltas(before, after map[string]float64, pt *peakTracker, result any) *record.ServerDeltas {
	d := func(k string) *float64 {
		a, okA := after[k]
		b, okB := before[k]
		if !okA || !okB {
			return nil
		}
		v := a - b
		return &v
	}
	at := func(k string) *float64 {
		if v, ok := after[k]; ok {
			return &v
		}
		return nil
	}
	c := CacheMetric
	sd := &record.ServerDeltas{
		PagesRead:         d(c("pages read into cache")),
		BytesRead:         d(c("bytes read into cache")),
		EvictedUnmodified: d(c("unmodified pages evicted")),
		EvictedModified:   d(c("modified pages evicted")),
		AppThreadEvicted:  d(c("pages evicted by application threads")),
		AppEvictMicros:    firstOf(d, record.AppThreadEvictMetrics),
		CacheUsedPeak:     pt.get(c("bytes currently in the cache")),
		DirtyPeak:         pt.get(c("tracked dirty bytes in the cache")),
		CacheMax:          at(c("maximum bytes configured")),
		Opcounters:        map[string]float64{},
	}
	for _, op := range []string{"insert", "query", "update", "delete", "getmore", "command"} {
		if v := d("opcounters." + op); v != nil {
			sd.Opcounters[op] = *v
		}
	}
	return sd
}
