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
// not been stopped; wtd calls it on SIGINT, SIGTERM and panic. It is safe
// to call from several goroutines at once and returns every Stop error.
func StopAll(ctx context.Context) error {
	registry.mu.Lock()
	servers := make([]*Server, 0, len(registry.servers))
	for s := range registry.servers {
		servers = append(servers, s)
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
