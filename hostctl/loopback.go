package hostctl

import (
	"fmt"
	"net"
	"strings"
)

// CheckLoopback accepts a "host:port" or a bare host only when the host is
// a loopback address (127.0.0.0/8, ::1) or "localhost". Names are not
// resolved: any other name is refused.
func CheckLoopback(hostport string) error {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("check address %q: %q is not a loopback address; only loopback targets (127.0.0.0/8, ::1, localhost) are allowed", hostport, host)
}
