package server

import (
	"net"
	"strconv"
	"testing"
)

// Without --ipv6 every listener is IPv4 only: Go's "tcp" on 0.0.0.0 would
// also accept IPv6 connections.
func TestListenNetwork(t *testing.T) {
	cases := []struct {
		ip      string
		ipv6    bool
		want    string
		wantErr bool
	}{
		{"0.0.0.0", false, "tcp4", false},
		{"127.0.0.1", false, "tcp4", false},
		{"localhost", false, "tcp4", false},
		{"::1", false, "", true},
		{"::", false, "", true},
		{"::1", true, "tcp6", false},
		// With --ipv6, "::" is bound by its own listener (--bind_ip_all
		// binds "0.0.0.0,::"): 0.0.0.0 must not take it too.
		{"0.0.0.0", true, "tcp4", false},
		{"localhost", true, "tcp", false},
	}
	for _, tc := range cases {
		got, err := listenNetwork(tc.ip, tc.ipv6)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("listenNetwork(%q, %v) = %q, %v; want %q, error %v", tc.ip, tc.ipv6, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestBindAllWithIPv6 binds what --bind_ip_all --ipv6 binds, 0.0.0.0 and
// ::, on one port, with the networks listenNetwork picks: both must open.
func TestBindAllWithIPv6(t *testing.T) {
	if l, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skip("no IPv6 on this host:", err)
	} else {
		l.Close()
	}
	port := 0
	for _, ip := range []string{"0.0.0.0", "::"} {
		network, err := listenNetwork(ip, true)
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen(network, net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("listen %s %s on port %d: %v", network, ip, port, err)
		}
		defer l.Close()
		port = l.Addr().(*net.TCPAddr).Port
	}
}
