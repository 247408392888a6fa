package hostctl

import (
	"context"
	"errors"
	"sync"
)

// registry holds every Server this process started and has not stopped.
var registry = struct {
	mu      sync.Mutex
	servers map[*Server]struct{}
}{servers: make(map[*Server]struct{})}

func register(s *Server) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.servers[s] = struct{}{}
}

func unregister(s *Server) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	delete(registry.servers, s)
}

// StopAll stops, in parallel, every server this process started that has
// not been stopped, whoever started them. It is safe
// to call from several goroutines at once and returns every Stop error.
func StopAll(ctx context.Context) error {
	return stop(ctx, func(*Server) bool { return true })
}

// StopOwned is StopAll for the servers started with StartOptions.Owner
// owner (a nil owner is an owner too: the servers started without one).
func StopOwned(ctx context.Context, owner any) error {
	return stop(ctx, func(s *Server) bool { return s.opts.Owner == owner })
}

// stop stops, in parallel, the registered servers that pick chooses.
func stop(ctx context.Context, pick func(*Server) bool) error {
	registry.mu.Lock()
	servers := make([]*Server, 0, len(registry.servers))
	for s := range registry.servers {
		if pick(s) {
			servers = append(servers, s)
		}
	}
	registry.mu.Unlock()

	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { errs[i] = s.Stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
