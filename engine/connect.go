package engine

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"wtd/hostctl"
)

// connectDirect connects to the server uri names for mongod.connect. The
// URI must name exactly one loopback host; mongodb+srv:// (a DNS query),
// replicaSet=, directConnection=false, proxies, and options that name
// files or fetch credentials elsewhere are refused before anything is
// resolved or sent (hostctl.CheckURI). The client connects directly to
// that host only (directConnection=true), through the loopback-only
// dialer, so the hosts a server advertises in hello are never followed.
// Connecting and the first ping take at most timeout (0: 5 s), and a
// failure is one line naming the address and the cause.
func (r *Run) connectDirect(ctx context.Context, uri string, timeout time.Duration) (*mongo.Client, error) {
	return hostctl.Connect(ctx, uri, hostctl.ConnectOptions{Timeout: timeout, Dialer: r.cfg.StartOptions.Dialer})
}
