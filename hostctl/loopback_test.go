package hostctl

import (
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
