// Package freeport picks free TCP ports on the loopback interface: the one
// function wtd uses to choose a port for a server it starts (hostctl), and
// the tests' helper (internal/testbin) is built on it. It imports nothing
// of wtd or minimongod, so both sides may use it.
package freeport

import (
	"context"
	"fmt"
	"net"
)

// Loopback asks the kernel for a TCP port that is free on 127.0.0.1 right
// now. Another process may take it before it is used, so whoever starts a
// server on it must still handle "address in use".
func Loopback(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find free port %d: close probe listener: %w", port, err)
	}
	return port, nil
}
