package fakemongod

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ReplicaSetHello are the hello fields of a server that says it belongs to
// a replica set whose only member is 10.1.2.3:27017, to tempt a driver into
// following it.
var ReplicaSetHello = bson.D{
	{Key: "setName", Value: "rs0"},
	{Key: "setVersion", Value: int32(1)},
	{Key: "hosts", Value: bson.A{"10.1.2.3:27017"}},
	{Key: "primary", Value: "10.1.2.3:27017"},
	{Key: "me", Value: "10.1.2.3:27017"},
	{Key: "electionId", Value: bson.NewObjectID()},
}

// StartAdvertising starts a fake whose hello is ReplicaSetHello, closed
// when the test ends.
func StartAdvertising(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatalf("start fake server: %v", err)
	}
	s.SetHello(ReplicaSetHello)
	t.Cleanup(func() { s.Close() })
	return s
}

// Recorder is a driver dialer that records every address it is asked to
// dial. It dials loopback IP addresses only; any other address is recorded
// and refused without a packet sent.
type Recorder struct {
	mu    sync.Mutex
	addrs []string
}

// DialContext records address and dials it when it is a loopback IP.
func (r *Recorder) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	r.addrs = append(r.addrs, address)
	r.mu.Unlock()
	host, _, err := net.SplitHostPort(address)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("recorder: refused to dial %s", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// Addrs returns the addresses dialled so far, in order.
func (r *Recorder) Addrs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.addrs...)
}

// Foreign returns the addresses dialled so far that are not addr.
func (r *Recorder) Foreign(addr string) []string {
	var out []string
	for _, a := range r.Addrs() {
		if a != addr {
			out = append(out, a)
		}
	}
	return out
}
