package hostctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// DefaultConnectTimeout bounds connecting to a server when
// ConnectOptions.Timeout is 0.
const DefaultConnectTimeout = 5 * time.Second

// ConnectOptions tune a driver client wtd makes.
type ConnectOptions struct {
	// Timeout bounds dialling, the handshake and server selection;
	// 0 means DefaultConnectTimeout.
	Timeout time.Duration
	// Dialer opens the client's connections; nil means LoopbackDialer.
	Dialer options.ContextDialer
}

func (o ConnectOptions) withDefaults() ConnectOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultConnectTimeout
	}
	if o.Dialer == nil {
		o.Dialer = LoopbackDialer
	}
	return o
}

// LoopbackDialer opens TCP connections to loopback addresses only: an
// address given as an IP must be a loopback one, and the address a name
// (localhost) resolves to is checked again just before connect(2), so no
// packet ever leaves for another host.
var LoopbackDialer options.ContextDialer = loopbackDialer{}

type loopbackDialer struct{}

func (loopbackDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := CheckLoopback(address); err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	d := net.Dialer{KeepAlive: 300 * time.Second, Control: func(_, resolved string, _ syscall.RawConn) error {
		return checkResolved(address, resolved)
	}}
	return d.DialContext(ctx, network, address)
}

// checkResolved accepts the ip:port a dialled address resolved to only
// when the IP is a loopback one.
func checkResolved(address, resolved string) error {
	host, _, _ := net.SplitHostPort(resolved)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("dial %s: it resolves to %s, which is not a loopback address", address, resolved)
	}
	return nil
}

// refusedURIOptions are the URI options wtd refuses, lower case, with why.
var refusedURIOptions = map[string]string{
	"replicaset":                  "wtd connects directly to the one server named and does not follow a replica set to its other members; drop replicaSet=",
	"loadbalanced":                "wtd connects directly to the one server named, not through a load balancer",
	"proxyhost":                   "wtd connects without a proxy",
	"proxyport":                   "wtd connects without a proxy",
	"proxyusername":               "wtd connects without a proxy",
	"proxypassword":               "wtd connects without a proxy",
	"tlscafile":                   "wtd reads no file a URI names",
	"tlscertificatekeyfile":       "wtd reads no file a URI names",
	"tlscertificatefile":          "wtd reads no file a URI names",
	"tlsprivatekeyfile":           "wtd reads no file a URI names",
	"tlscrlfile":                  "wtd reads no file a URI names",
	"sslcertificateauthorityfile": "wtd reads no file a URI names",
	"sslclientcertificatekeyfile": "wtd reads no file a URI names",
	"authmechanismproperties":     "wtd uses only password mechanisms (SCRAM), which take no properties",
	"srvservicename":              "wtd resolves no DNS SRV records",
	"srvmaxhosts":                 "wtd resolves no DNS SRV records",
}

// allowedAuthMechanisms are the mechanisms that talk to the server only
// (others fetch credentials from other hosts or read files).
var allowedAuthMechanisms = map[string]bool{"scram-sha-1": true, "scram-sha-256": true, "plain": true}

// CheckURI checks a server URI before anything is resolved or read: a
// mongodb:// URI (mongodb+srv:// is refused, since it starts with a DNS
// query) of exactly one loopback host, with no option that would make the
// driver reach another host or read a file. It returns the host:port.
func CheckURI(uri string) (string, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	switch {
	case !ok:
		return "", errors.New(`connect: a URI starts with "mongodb://", e.g. mongodb://127.0.0.1:27017`)
	case strings.EqualFold(scheme, "mongodb+srv"):
		return "", errors.New("connect: mongodb+srv:// URIs are refused: they start with a DNS SRV query, and wtd resolves no names; give mongodb://127.0.0.1:PORT")
	case !strings.EqualFold(scheme, "mongodb"):
		return "", fmt.Errorf(`connect: scheme %q: a URI starts with "mongodb://", e.g. mongodb://127.0.0.1:27017`, scheme)
	}
	hosts, query, _ := strings.Cut(rest, "?")
	hosts, _, _ = strings.Cut(hosts, "/")
	if i := strings.LastIndex(hosts, "@"); i >= 0 {
		hosts = hosts[i+1:]
	}
	list := strings.Split(hosts, ",")
	if len(list) != 1 || list[0] == "" {
		return "", fmt.Errorf("connect: the URI names %d hosts (%s): wtd connects directly to one server; name only it", len(list), strings.Join(list, ", "))
	}
	host := list[0]
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "27017")
	}
	if err := CheckLoopback(host); err != nil {
		return "", fmt.Errorf("connect %s: %w", host, err)
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("connect %s: URI options: %w", host, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := values.Get(k)
		lk := strings.ToLower(k)
		switch {
		case refusedURIOptions[lk] != "":
			return "", fmt.Errorf("connect %s: URI option %s is refused: %s", host, k, refusedURIOptions[lk])
		case lk == "directconnection" && !strings.EqualFold(v, "true"):
			return "", fmt.Errorf("connect %s: directConnection=%s is refused: wtd connects directly to the one server named (directConnection=true)", host, v)
		case lk == "authmechanism" && !allowedAuthMechanisms[strings.ToLower(v)]:
			return "", fmt.Errorf("connect %s: authMechanism=%s is refused: wtd uses password mechanisms only (SCRAM-SHA-256, SCRAM-SHA-1, PLAIN), which talk to the server alone", host, v)
		}
	}
	return host, nil
}

// ClientOptions returns the driver options of a client connected directly
// (directConnection=true) to the one loopback server uri names (see
// CheckURI), through o.Dialer: the driver never follows the hosts a
// server advertises. It resolves no name and reads no file.
func ClientOptions(uri string, o ConnectOptions) (*options.ClientOptions, error) {
	host, err := CheckURI(uri)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults()
	opts := options.Client().ApplyURI(uri).
		SetHosts([]string{host}).
		SetDirect(true).
		SetConnectTimeout(o.Timeout).
		SetServerSelectionTimeout(o.Timeout).
		SetDialer(o.Dialer).
		// With TLS, the driver would ask the OCSP responder a
		// certificate names: another host.
		SetDisableOCSPEndpointCheck(true)
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("connect %s: %w", host, err)
	}
	return opts, nil
}

// Connect connects to the one loopback server uri names (see
// ClientOptions) and pings it, all within o.Timeout. Its errors are one
// line naming the address and the cause, e.g. "connect 127.0.0.1:1:
// connection refused".
func Connect(ctx context.Context, uri string, o ConnectOptions) (*mongo.Client, error) {
	opts, err := ClientOptions(uri, o)
	if err != nil {
		return nil, err
	}
	o = o.withDefaults()
	host := opts.Hosts[0]
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// One dial first: a closed port fails at once, in the system's words.
	conn, err := o.Dialer.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %s", host, dialCause(err, o.Timeout))
	}
	conn.Close()
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", host, err)
	}
	if err := client.Ping(ctx, nil); err != nil {
		client.Disconnect(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("connect %s: %s", host, pingCause(err, o.Timeout))
	}
	return client, nil
}

// dialCause words a dial error: the system's reason ("connection
// refused"), or the timeout.
func dialCause(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Sprintf("no connection within %s", timeout)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

// pingCause words a failed first ping: the last error the driver met on
// the server rather than its whole topology description.
func pingCause(err error, timeout time.Duration) string {
	var sse topology.ServerSelectionError
	if errors.As(err, &sse) {
		for _, s := range sse.Desc.Servers {
			if s.LastError != nil {
				return dialCause(s.LastError, timeout)
			}
		}
		return fmt.Sprintf("no answer to hello within %s", timeout)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	return err.Error()
}
