package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/hostctl"
)

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
