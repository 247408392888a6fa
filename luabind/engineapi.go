package luabind

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/autotune"
	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/workload"
	"wtd/hostctl"
)

// runAPI is the engine side of the bindings: what a playbook's calls do
// once their arguments are checked. A real run's is liveRun, an
// *engine.Run; wtd check's is checkRun, a stand-in that checks each call
// as the engine does and returns a result of its shape, acting on nothing.
// The bindings are the same for both, so every options table, method and
// argument has one definition.
type runAPI interface {
	StartServer(ctx context.Context, opts engine.ServerOptions) (server, error)
	ConnectServer(ctx context.Context, uri string, timeout time.Duration) (server, error)
	ServiceServer(ctx context.Context, o engine.ServiceOptions) (server, error)
	// DefaultServer is the only running server, nil when there is none
	// or several.
	DefaultServer() server
	Loads() *workload.Loads
	Step(ctx context.Context, spec stepSpec, fn func(context.Context) (any, error)) error
	Steps() []record.StepRecord
	SweepThreads(ctx context.Context, s server, spec workload.Spec, opt engine.SweepOptions) (workload.SweepResult, error)
	RecordTable(opt record.ReportOptions, steps int)
	DropCaches(ctx context.Context) hostctl.DropResult
	Dir() string
	Eventf(level, source, format string, args ...any)
	Output(line string)
	SetParams(ctx context.Context, params map[string]any) error
	AddThreshold(t record.Threshold)
	Abort(cause error)
	// CheckTune and Tune are tune{}'s search (autotune) on s; cfg.Server
	// is set from s.
	CheckTune(s server, cfg autotune.Config) error
	Tune(ctx context.Context, s server, cfg autotune.Config) (*autotune.Result, error)
}

// stepSpec is engine.StepSpec with the bindings' server.
type stepSpec struct {
	Name   string
	Labels map[string]any
	Server server
	NS     string
}

// server is the engine side of a server handle (engine.Server's methods).
type server interface {
	workload.Collections
	name() string
	URI() string
	PID() int
	Started() bool
	Restart(ctx context.Context, ch engine.ServerChanges) error
	Stop(ctx context.Context) error
	SetParameterKeep(ctx context.Context, name string, value any, keep bool) (any, error)
	GetParameter(ctx context.Context, name string) (any, error)
	ReconfigureKeep(ctx context.Context, cfg string, keep bool) error
	ServerStatus(ctx context.Context) (bson.Raw, error)
	PlaybookCommand(ctx context.Context, db string, cmd bson.D) (bson.Raw, error)
	Load(ctx context.Context, spec workload.LoadSpec, progress func(done, total int64)) (workload.LoadResult, error)
	Workload(ctx context.Context, spec workload.Spec, progress func(done, total int64)) (workload.Result, error)
	CreateIndex(ctx context.Context, spec engine.IndexSpec) (string, error)
}

// liveRun is a real run.
type liveRun struct{ *engine.Run }

// liveServer is a server of a real run.
type liveServer struct{ *engine.Server }

func (s liveServer) name() string { return s.Name }

// live returns the engine's server behind s (nil for nil).
func live(s server) *engine.Server {
	if ls, ok := s.(liveServer); ok {
		return ls.Server
	}
	return nil
}

func liveOrNil(s *engine.Server, err error) (server, error) {
	if err != nil {
		return nil, err
	}
	return liveServer{s}, nil
}

func (r liveRun) StartServer(ctx context.Context, opts engine.ServerOptions) (server, error) {
	return liveOrNil(r.Run.StartServer(ctx, opts))
}

func (r liveRun) ConnectServer(ctx context.Context, uri string, timeout time.Duration) (server, error) {
	return liveOrNil(r.Run.ConnectServer(ctx, uri, timeout))
}

func (r liveRun) ServiceServer(ctx context.Context, o engine.ServiceOptions) (server, error) {
	return liveOrNil(r.Run.ServiceServer(ctx, o))
}

func (r liveRun) DefaultServer() server {
	if s := r.Run.DefaultServer(); s != nil {
		return liveServer{s}
	}
	return nil
}

func (r liveRun) Step(ctx context.Context, spec stepSpec, fn func(context.Context) (any, error)) error {
	_, err := r.Run.Step(ctx, engine.StepSpec{Name: spec.Name, Labels: spec.Labels, Server: live(spec.Server), NS: spec.NS}, fn)
	return err
}

func (r liveRun) SweepThreads(ctx context.Context, s server, spec workload.Spec, opt engine.SweepOptions) (workload.SweepResult, error) {
	return r.Run.SweepThreads(ctx, live(s), spec, opt)
}

func (r liveRun) CheckTune(s server, cfg autotune.Config) error {
	cfg.Server = live(s)
	_, err := autotune.Check(cfg)
	return err
}

func (r liveRun) Tune(ctx context.Context, s server, cfg autotune.Config) (*autotune.Result, error) {
	cfg.Server = live(s)
	return autotune.Run(ctx, r.Run, cfg)
}

var (
	_ runAPI = liveRun{}
	_ server = liveServer{}
)
