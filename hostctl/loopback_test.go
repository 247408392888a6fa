package hostctl

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestCheckLoopback(t *testing.T) {
	ok := []string{"127.0.0.1:27017", "127.1.2.3:1", "[::1]:27017", "::1", "localhost:9900", "LOCALHOST", "127.0.0.1"}
	for _, a := range ok {
		if err := CheckLoopback(a); err != nil {
			t.Errorf("CheckLoopback(%q) = %v, want nil", a, err)
		}
	}
	bad := []string{"10.0.0.1:27017", "0.0.0.0:27017", "[::]:27017", "example.com:27017", "128.0.0.1", "", "localhost.evil.com:1"}
	for _, a := range bad {
		err := CheckLoopback(a)
		if err == nil {
			t.Errorf("CheckLoopback(%q) = nil, want an error", a)
			continue
		}
		if !strings.Contains(err.Error(), "only loopback targets") || !strings.Contains(err.Error(), strconv.Quote(a)) {
			t.Errorf("CheckLoopback(%q) = %q: must name the address and say only loopback is allowed", a, err)
		}
	}
}

func TestFreePort(t *testing.T) {
	port, err := FreePort(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port = %d", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	l.Close()
}
