package hostctl

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Stop shuts the server down: the shutdown admin command first (the
// connection dropping under it is expected), then SIGTERM and SIGKILL to
// its process group if it has not exited within StopTimeout each. When ctx
// ends first the server is killed at once. Stop is idempotent, and stopping
// a crashed server returns nil (see ExitErr).
func (s *Server) Stop(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	err := s.current().stop(ctx, s.opts)
	unregister(s)
	return err
}

func (p *process) stop(ctx context.Context, opts StartOptions) error {
	p.stopping.Store(true)
	defer p.disconnect()
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.requestShutdown(ctx)
	if p.waitExit(ctx, opts.StopTimeout) {
		return nil
	}
	if ctx.Err() == nil {
		p.signal(syscall.SIGTERM)
		if p.waitExit(ctx, opts.StopTimeout) {
			return nil
		}
	}
	p.signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop mongod pid %d: still running 10s after SIGKILL", p.pid())
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stop mongod pid %d: %w; killed it", p.pid(), err)
	}
	return nil
}

// requestShutdown sends {shutdown: 1}. A server that obeys drops the
// connection instead of answering, so the result is not an error either
// way: waitExit decides.
func (p *process) requestShutdown(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p.client.Database("admin").RunCommand(ctx, bson.D{{Key: "shutdown", Value: 1}})
}

// waitExit reports whether the process exited within d; false also when
// ctx ended first.
func (p *process) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// Restart stops the server and starts it again with spec on the same
// dbpath and port; an empty Binary or DBPath, or a zero Port, in spec
// keeps the current one. spec is validated before anything is stopped.
// Afterwards the Server stands for the new process.
func (s *Server) Restart(ctx context.Context, spec ServerSpec) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	old := s.current()
	if spec.Binary == "" {
		spec.Binary = old.spec.Binary
	}
	if spec.DBPath == "" {
		spec.DBPath = old.spec.DBPath
	}
	if spec.Port == 0 {
		spec.Port = old.spec.Port
	}
	if spec.DBPath != old.spec.DBPath || spec.Port != old.spec.Port {
		return fmt.Errorf("restart mongod: dbpath %s port %d differ from the running server's %s port %d",
			spec.DBPath, spec.Port, old.spec.DBPath, old.spec.Port)
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("restart mongod: %w", err)
	}
	if err := old.stop(ctx, s.opts); err != nil {
		return fmt.Errorf("restart mongod: %w", err)
	}
	p, err := launch(ctx, spec, s.opts)
	if err != nil {
		return fmt.Errorf("restart mongod: %w", err)
	}
	s.mu.Lock()
	s.cur = p
	s.mu.Unlock()
	register(s)
	return nil
}
