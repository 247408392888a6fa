package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/hostctl"
)

// workloadClient connects a client of the workload's own to s (directly,
// through the run's loopback dialer) and opens one connection per thread,
// so that no thread pays for a handshake inside its measured operations.
func (s *Server) workloadClient(ctx context.Context, threads int) (*mongo.Client, error) {
	s.mu.Lock()
	uri := s.uri
	s.mu.Unlock()
	opts, err := hostctl.ClientOptions(uri, hostctl.ConnectOptions{Dialer: s.run.cfg.StartOptions.Dialer})
	if err != nil {
		return nil, err
	}
	opts.SetMaxPoolSize(uint64(threads + 1))
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", redact(uri), err)
	}
	// Pings at the same time take as many connections.
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Go(func() { errs[i] = client.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err() })
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
