package hostctl

import (
	"context"
	"fmt"
	"net"
)

// FreePort asks the kernel for a TCP port that is free on 127.0.0.1 right
// now. Another process may take it before it is used, so a server started
// on it must still handle "address in use".
func FreePort(ctx context.Context) (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	return port, nil
}
