package server

import "testing"

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
		{"0.0.0.0", true, "tcp", false},
	}
	for _, tc := range cases {
		got, err := listenNetwork(tc.ip, tc.ipv6)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("listenNetwork(%q, %v) = %q, %v; want %q, error %v", tc.ip, tc.ipv6, got, err, tc.want, tc.wantErr)
		}
	}
}
