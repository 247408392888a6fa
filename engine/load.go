package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/engine/workload"
	"wtd/hostctl"
)

// statusInterval is how often a workload that Server.Workload runs says
// how it goes, as a run event.
var statusInterval = workload.DefaultStatusInterval

// Load inserts documents into the server (see workload.Load). If the
// server goes down meanwhile (see UnansweredWindow) the load stops at once
// with a *ServerDownError, and its result covers the time the server was
// up. A failed load's result is kept for the step it runs in; one that
// succeeds is noted in the run's Loads.
func (s *Server) Load(ctx context.Context, spec workload.LoadSpec, progress func(done, total int64)) (workload.LoadResult, error) {
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := s.watchDown(lctx, "load", func(e *ServerDownError) { cancel(e) })
	res, err := workload.Load(lctx, s.Client(), spec, workload.Hooks{Progress: progress, Down: watch.hook(lctx)})
	watch.stop()
	if err != nil {
		if res.Elapsed > 0 {
			s.run.notePartial(res)
		}
		return res, err
	}
	s.run.loads.Note(spec)
	s.run.Eventf("info", s.Name, "loaded %d documents into %s: %.0f docs/s, %.1f MB/s", res.Docs, spec.NS, res.DocsPerSec, res.MBPerSec)
	return res, nil
}

// Loads returns what the run's loads that succeeded did: the defaults of
// its workloads' namespace and document size (see workload.Complete,
// with a *Server for its collStats).
func (r *Run) Loads() *workload.Loads { return &r.loads }

// Workload runs a workload against the server (see workload.Run).
//
// The workload has a client of its own, with one connection per thread
// made before the clock starts; when ctx ends, its connections are closed,
// which ends the operations in flight even on a server that stopped
// answering. Every 10 s a run event gives the operations so far, the rate
// and the p99 latency so far. If the server goes down meanwhile (see
// UnansweredWindow) the workload stops at once with a *ServerDownError and
// its result covers the time the server was up (see workload.Run). A
// failed workload's result is kept for the step it runs in.
func (s *Server) Workload(ctx context.Context, spec workload.Spec, progress func(done, total int64)) (workload.Result, error) {
	return s.GuardedWorkload(ctx, spec, progress, nil)
}

// guardInterval is how often a guarded workload asks its guard.
const guardInterval = 250 * time.Millisecond

// GuardedWorkload is Workload with a guard: guard is asked every 250 ms
// with the workload so far, and the first error it returns stops the
// workload at once with that error as its cause (the result covers what
// was done until then). A nil guard is Workload.
func (s *Server) GuardedWorkload(ctx context.Context, spec workload.Spec, progress func(done, total int64), guard func(workload.Status) error) (workload.Result, error) {
	w, err := workload.Prepare(spec)
	if err != nil {
		return workload.Result{}, err
	}
	client, err := s.workloadClient(ctx, w.Spec().Threads)
	if err != nil {
		return workload.Result{}, fmt.Errorf("run workload %s: %w", spec.NS, err)
	}
	defer client.Disconnect(context.WithoutCancel(ctx))
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := s.watchDown(wctx, "workload", func(e *ServerDownError) { cancel(e) })
	status, interval := func(st workload.Status) { s.run.Eventf("info", s.Name, "%s", st) }, statusInterval
	if guard != nil {
		var said time.Duration
		log := status
		status = func(st workload.Status) {
			if st.Elapsed-said >= statusInterval {
				said = st.Elapsed
				log(st)
			}
			if err := guard(st); err != nil {
				cancel(err)
			}
		}
		interval = min(interval, guardInterval)
	}
	res, err := w.Run(wctx, client, workload.Hooks{
		Progress:       progress,
		Status:         status,
		StatusInterval: interval,
		Down:           watch.hook(wctx),
		Abort:          func() { closeNow(client) },
	})
	watch.stop()
	if err != nil {
		s.run.notePartial(res)
		return res, err
	}
	return res, nil
}

// workloadWarmup returns the warm-up of a step's workload result, nil when
// the result is no workload's or it had none.
func workloadWarmup(result any) *workload.WarmupResult {
	switch r := result.(type) {
	case workload.Result:
		return r.Warmup
	case *workload.Result:
		return r.Warmup
	}
	return nil
}

// workloadSelectTimeout bounds how long an operation of a workload waits
// for its server to be known again after a network error. It is short so
// that the operations of a workload whose server went down end soon after
// the workload stops (closing the client's connections does not end that
// wait).
const workloadSelectTimeout = time.Second

// workloadClient connects a client of the workload's own to s (directly,
// through the run's loopback dialer) and opens one connection per thread,
// so that no thread pays for a handshake inside its measured operations.
// The client does not retry operations: a failed operation is measured as
// a failure, not hidden in a longer success.
func (s *Server) workloadClient(ctx context.Context, threads int) (*mongo.Client, error) {
	s.mu.Lock()
	uri := s.uri
	s.mu.Unlock()
	opts, err := hostctl.ClientOptions(uri, hostctl.ConnectOptions{Dialer: s.run.cfg.StartOptions.Dialer})
	if err != nil {
		return nil, err
	}
	opts.SetMaxPoolSize(uint64(threads + 1)).SetServerSelectionTimeout(workloadSelectTimeout).
		SetRetryReads(false).SetRetryWrites(false)
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", redact(uri), err)
	}
	// Pings at the same time take as many connections; each is tried
	// again until the connect timeout, since one may come before the
	// client has found the server.
	deadline := time.Now().Add(hostctl.DefaultConnectTimeout)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() { errs[i] = pingUntil(ctx, client, deadline) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeNow(client)
		return nil, fmt.Errorf("connect %s: %w", redact(uri), err)
	}
	return client, nil
}

// closeNow disconnects client at once, closing the connections that are
// in use too, so that the operations waiting on them fail.
func closeNow(client *mongo.Client) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = client.Disconnect(done)
}

// pingUntil pings through client until the server answers, ctx ends or
// deadline passes, pausing a little between tries.
func pingUntil(ctx context.Context, client *mongo.Client, deadline time.Time) error {
	const pause = 50 * time.Millisecond
	for {
		err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
		if err == nil || time.Now().Add(pause).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}
