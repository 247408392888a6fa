package luabind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"wtd/engine/record"
	"wtd/hostctl"
)

// CheckOptions bound a check; zero values are the defaults.
type CheckOptions struct {
	// Timeout bounds the check's real time (default 5 s).
	Timeout time.Duration
	// Memory bounds the memory it may take (default 256 MB).
	Memory int64
}

// CheckReport is what a playbook would do, as its check saw it.
type CheckReport struct {
	Path   string         `json:"playbook"`
	Params []CheckedParam `json:"params"`
	// Declared is false when the playbook never called params{}.
	Declared   bool               `json:"declared"`
	Servers    []CheckedServer    `json:"servers"`
	Steps      []CheckedStep      `json:"steps"`
	Calls      []CheckedCall      `json:"calls"`
	Thresholds []record.Threshold `json:"thresholds"`
	DropCaches int                `json:"drop_caches"`
	Tables     int                `json:"report_tables"`
	// AtLeast is the time the playbook would take at least: its sleeps
	// and the durations of its workloads.
	AtLeast time.Duration `json:"at_least_ns"`
	// Stopped, when not empty, says where and why the check stopped
	// before the playbook's end ("pb.lua:30: ..."); what ran until there
	// is checked.
	Stopped string `json:"stopped,omitempty"`
	// Took is how long the check took.
	Took time.Duration `json:"took_ns"`
}

// CheckedParam is a parameter with its default and the value a run gets.
type CheckedParam struct {
	Param
	Value any `json:"value"`
}

// CheckedServer is a server the playbook would start or attach to.
type CheckedServer struct {
	Name string `json:"name"`
	// Kind is "start" (mongod.start), "connect" or "service".
	Kind string `json:"kind"`
	// Settings are a started server's first settings (hostctl's text).
	Settings string `json:"settings,omitempty"`
	URI      string `json:"uri,omitempty"`
	Unit     string `json:"unit,omitempty"`
	Restarts int    `json:"restarts"`
}

// CheckedStep is a step name and how many steps of it the playbook runs.
type CheckedStep struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// CheckedCall is a load or workload the playbook would run, Count times.
type CheckedCall struct {
	Server string `json:"server"`
	Kind   string `json:"kind"` // "load" or "workload"
	NS     string `json:"ns"`
	Detail string `json:"detail"`
	Count  int    `json:"count"`
}

// errCheckTime and errCheckMemory stop a check at its bounds.
var (
	errCheckTime   = errors.New("the check ran out of its time")
	errCheckMemory = errors.New("the check ran out of its memory")
)

// CheckPlaybook finds a playbook's mistakes before anything is recorded:
// it runs the whole playbook, loops and all, with overrides as -p gives
// them, against a stand-in of the engine (checkRun) that checks every
// call as a run does (the same bindings, options tables and engine checks)
// and returns results of the engine's shape, without starting or
// contacting a server, dropping caches, writing files or recording
// anything; sleep returns at once. Errors read "path:line: message" as a
// run's do (errors.As finds a *ParamError for a bad -p).
//
// A check is bounded by opt (time, memory). Stopped by a bound, or at a
// pattern function (which a check does not run), it reports where in
// CheckReport.Stopped and passes what ran until there; overrides are
// then checked against params{} or, if the playbook had not called it
// yet, against its text (readDeclaredParams).
func CheckPlaybook(ctx context.Context, path, src string, overrides map[string]string, opt CheckOptions) (*CheckReport, error) {
	began := time.Now()
	if opt.Timeout <= 0 {
		opt.Timeout = checkTimeout
	}
	if opt.Memory <= 0 {
		opt.Memory = checkMemory
	}
	outer := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(opt.Timeout, func() { cancel(errCheckTime) })
	defer timer.Stop()
	defer watchCheckMemory(opt.Memory, func() { cancel(errCheckMemory) })()

	dry := &checkRun{clock: &checkClock{start: time.Now()}, cancel: cancel}
	b := &binding{ctx: ctx, env: Env{Overrides: overrides, MaxString: opt.Memory / 4}, run: dry, dry: dry,
		out: io.Discard, host: hostctl.NewHost(), path: path, checking: true}
	rep := &CheckReport{Path: path}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	b.openAll(L)

	fn, err := L.Load(strings.NewReader(src), path)
	if err != nil {
		return rep, syntaxError(path, src, err)
	}
	L.SetContext(ctx)
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	defer func() { b.fillReport(rep, began) }()
	bound := context.Cause(ctx)
	switch {
	case outer.Err() != nil:
		return rep, b.scriptError(err)
	case bound == errCheckTime || bound == errCheckMemory || b.checkDone:
		if b.stopped == "" {
			b.stopped = b.where(err) + " " + bound.Error() + fmt.Sprintf(" (%s, %s)", opt.Timeout, formatMB(opt.Memory))
		}
		if b.paramsSet {
			return rep, nil
		}
		return rep, readDeclaredParams(path, src).check(L, path, overrides)
	case err != nil && b.ownError(errText(err)):
		// The playbook's own error() or assert(): it may hold on what a
		// run measures. The check stops there.
		where := b.where(err)
		b.stopped = where + " the playbook raised an error itself (error or assert), which may depend on what a run measures: " +
			strings.TrimSpace(strings.TrimPrefix(firstLine(errText(err)), where))
		if b.paramsSet {
			return rep, nil
		}
		return rep, readDeclaredParams(path, src).check(L, path, overrides)
	case err != nil:
		return rep, b.scriptError(err)
	case !b.paramsSet && len(overrides) > 0:
		if err := readDeclaredParams(path, src).check(L, path, overrides); err != nil {
			return rep, err
		}
		perr := b.unknownParam(nil)
		return rep, &ScriptError{Msg: path + ": " + perr.Error(), errs: []error{perr}}
	}
	return rep, nil
}

// errText is the message of a failed PCall.
func errText(err error) string {
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		return ae.Object.String()
	}
	return err.Error()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// where is the "path:line:" an error names, or the playbook's path.
func (b *binding) where(err error) string {
	if err != nil {
		msg := errText(err)
		if strings.HasPrefix(msg, b.path+":") {
			rest := msg[len(b.path)+1:]
			if i := strings.Index(rest, ":"); i > 0 {
				return b.path + ":" + rest[:i+1]
			}
		}
	}
	return b.path + ":"
}

func formatMB(n int64) string { return fmt.Sprintf("%d MB", n>>20) }

// fillReport writes what the check saw into rep.
func (b *binding) fillReport(rep *CheckReport, began time.Time) {
	dry := b.dry
	rep.Declared = b.paramsSet
	for _, p := range b.declared {
		rep.Params = append(rep.Params, CheckedParam{Param: p, Value: b.params[p.Name]})
	}
	for _, s := range dry.servers {
		cs := CheckedServer{Name: s.n, Kind: s.kind, Unit: s.unit, Restarts: s.restarts}
		if s.kind == "start" {
			cs.Settings = s.first
		} else {
			cs.URI = s.uri
		}
		rep.Servers = append(rep.Servers, cs)
	}
	at := map[string]int{}
	for _, st := range dry.steps {
		if i, ok := at[st.Name]; ok {
			rep.Steps[i].Count++
			continue
		}
		at[st.Name] = len(rep.Steps)
		rep.Steps = append(rep.Steps, CheckedStep{Name: st.Name, Count: 1})
	}
	rep.Calls = dry.calls
	rep.Thresholds = dry.thresholds
	rep.DropCaches, rep.Tables = dry.drops, dry.tables
	rep.AtLeast = dry.clock.elapsed()
	rep.Stopped = b.stopped
	rep.Took = time.Since(began)
}
