package freeport

import (
	"context"
	"net"
	"strconv"
	"testing"
)

// The port Loopback returns can be bound on 127.0.0.1 right after.
func TestLoopbackPortCanBeBound(t *testing.T) {
	port, err := Loopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port = %d, want 1..65535", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	l.Close()
}
