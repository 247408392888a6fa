package hostctl

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

func TestCheckURI(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(secret, []byte("SECRET-CA-LINE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for uri, want := range map[string]string{
		"mongodb://127.0.0.1:27017":                                    "127.0.0.1:27017",
		"mongodb://localhost":                                          "localhost:27017",
		"mongodb://[::1]:1/?directConnection=true":                     "[::1]:1",
		"mongodb://u:p%40ss@127.0.0.2:9/db?authSource=admin&appName=x": "127.0.0.2:9",
		"mongodb://u:p@127.0.0.1/?authMechanism=SCRAM-SHA-256":         "127.0.0.1:27017",
	} {
		got, err := CheckURI(uri)
		if err != nil || got != want {
			t.Errorf("CheckURI(%s) = %q, %v; want %q", uri, got, err, want)
		}
	}
	for uri, want := range map[string]string{
		"mongodb+srv://cluster0.example.net/":                         "mongodb+srv:// URIs are refused: they start with a DNS SRV query",
		"MONGODB+SRV://127.0.0.1/":                                    "mongodb+srv:// URIs are refused",
		"http://127.0.0.1:27017":                                      `scheme "http"`,
		"127.0.0.1:27017":                                             `a URI starts with "mongodb://"`,
		"mongodb://127.0.0.1:1,127.0.0.1:2/":                          "the URI names 2 hosts (127.0.0.1:1, 127.0.0.1:2): wtd connects directly to one server",
		"mongodb://10.1.2.3:27017/":                                   `connect 10.1.2.3:27017: check address "10.1.2.3:27017": "10.1.2.3" is not a loopback address`,
		"mongodb://db.example.com/":                                   "is not a loopback address",
		"mongodb://%2Ftmp%2Fmongodb-27017.sock/":                      "is not a loopback address",
		"mongodb://127.0.0.1/?replicaSet=rs0":                         "URI option replicaSet is refused: wtd connects directly to the one server named",
		"mongodb://127.0.0.1/?directConnection=false":                 "directConnection=false is refused",
		"mongodb://127.0.0.1/?loadBalanced=true":                      "URI option loadBalanced is refused",
		"mongodb://127.0.0.1/?proxyHost=10.1.2.3":                     "URI option proxyHost is refused: wtd connects without a proxy",
		"mongodb://127.0.0.1/?tls=true&tlsCAFile=" + secret:           "URI option tlsCAFile is refused: wtd reads no file a URI names",
		"mongodb://127.0.0.1/?authMechanism=MONGODB-AWS":              "authMechanism=MONGODB-AWS is refused",
		"mongodb://127.0.0.1/?authMechanism=GSSAPI":                   "authMechanism=GSSAPI is refused",
		"mongodb://127.0.0.1/?authMechanismProperties=SERVICE_HOST:x": "URI option authMechanismProperties is refused",
	} {
		_, err := CheckURI(uri)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURI(%s) = %v, want an error containing %q", uri, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("CheckURI(%s) quotes a file: %v", uri, err)
		}
	}
}

// failingResolver makes any DNS lookup of this process fail loudly and
// counts the lookups, until the test ends.
func failingResolver(t *testing.T) *int {
	t.Helper()
	lookups := new(int)
	old := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		*lookups++
		return nil, errors.New("test: no DNS lookup may happen")
	}}
	t.Cleanup(func() { net.DefaultResolver = old })
	return lookups
}

func TestConnectRefusesSRVBeforeAnyLookup(t *testing.T) {
	lookups := failingResolver(t)
	start := time.Now()
	_, err := Connect(context.Background(), "mongodb+srv://cluster0.example.net/?tls=true", ConnectOptions{})
	if err == nil || !strings.Contains(err.Error(), "mongodb+srv:// URIs are refused") {
		t.Fatalf("Connect(mongodb+srv://...) = %v, want the refusal", err)
	}
	if *lookups != 0 {
		t.Errorf("%d DNS lookups happened", *lookups)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("the refusal took %s", d)
	}
	// The resolver does see the lookups a driver left alone makes.
	options.Client().ApplyURI("mongodb+srv://cluster0.example.net/")
	if *lookups == 0 {
		t.Error("control: parsing a mongodb+srv:// URI made no lookup through the test's resolver")
	}
}

func TestLoopbackDialerRefusesOtherHosts(t *testing.T) {
	start := time.Now()
	_, err := LoopbackDialer.DialContext(context.Background(), "tcp", "10.1.2.3:27017")
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("dial 10.1.2.3:27017: %v, want a refusal", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("the refusal took %s: it was dialled", d)
	}
	if err := checkResolved("db.example.com:27017", "10.1.2.3:27017"); err == nil || !strings.Contains(err.Error(), "resolves to 10.1.2.3:27017, which is not a loopback address") {
		t.Errorf("a name resolving to 10.1.2.3: %v", err)
	}
	if err := checkResolved("localhost:27017", "[::1]:27017"); err != nil {
		t.Errorf("localhost resolving to ::1: %v", err)
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	return testbin.FreePort(t)
}

func TestConnectClosedPortFailsAtOnceInOneLine(t *testing.T) {
	port := closedPort(t)
	start := time.Now()
	_, err := Connect(context.Background(), "mongodb://127.0.0.1:"+strconv.Itoa(port), ConnectOptions{})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("failing took %s", d)
	}
	want := "connect 127.0.0.1:" + strconv.Itoa(port) + ": connection refused"
	if err == nil || err.Error() != want {
		t.Fatalf("Connect to a closed port = %v, want %q", err, want)
	}
}

func TestConnectSilentServerTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // accept and never answer
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Connect(context.Background(), "mongodb://"+l.Addr().String(), ConnectOptions{Timeout: 500 * time.Millisecond})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("failing took %s with a 500ms timeout", d)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "connect "+l.Addr().String()+": ") ||
		strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "topology") {
		t.Fatalf("Connect to a silent server = %v, want one line naming the address", err)
	}
	t.Log(err)
}

// pingAndWait runs a few commands and gives the driver time to act on
// what hello said.
func pingAndWait(t *testing.T, c *mongo.Client) {
	t.Helper()
	for _, cmd := range []string{"ping", "buildInfo", "ping"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Database("admin").RunCommand(ctx, bson.D{{Key: cmd, Value: 1}}).Err()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
}

func TestConnectFollowsNoAdvertisedHost(t *testing.T) {
	fake := fakemongod.StartAdvertising(t)

	// The fake does tempt a driver left to discover the replica set.
	control := &fakemongod.Recorder{}
	c, err := mongo.Connect(options.Client().ApplyURI(fake.URI() + "/?replicaSet=rs0").
		SetDialer(control).SetServerSelectionTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	c.Ping(ctx, nil)
	cancel()
	c.Disconnect(context.Background())
	if !strings.Contains(strings.Join(control.Addrs(), " "), "10.1.2.3:27017") {
		t.Fatalf("control: a discovering driver dialled only %q; the fake does not tempt it", control.Addrs())
	}

	rec := &fakemongod.Recorder{}
	c, err = Connect(context.Background(), fake.URI(), ConnectOptions{Timeout: 2 * time.Second, Dialer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	pingAndWait(t, c)
	if foreign := rec.Foreign(fake.Addr()); len(foreign) > 0 || len(rec.Addrs()) == 0 {
		t.Errorf("dialled %q; want only %s", rec.Addrs(), fake.Addr())
	}
}

func TestStartedServerClientFollowsNoAdvertisedHost(t *testing.T) {
	fake := fakemongod.StartAdvertising(t)
	_, port, _ := net.SplitHostPort(fake.Addr())
	p, _ := strconv.Atoi(port)
	dir := t.TempDir()
	// A "server" that only waits: the fake answers on the port it is given.
	bin := script(t, dir, "idle-mongod", "exec sleep 300\n")
	rec := &fakemongod.Recorder{}
	s, err := Start(context.Background(), ServerSpec{Binary: bin, DBPath: filepath.Join(dir, "db"), Port: p},
		StartOptions{StartTimeout: 10 * time.Second, StopTimeout: time.Second, Dialer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	pingAndWait(t, s.Client())
	if foreign := rec.Foreign(fake.Addr()); len(foreign) > 0 || len(rec.Addrs()) == 0 {
		t.Errorf("dialled %q; want only %s", rec.Addrs(), fake.Addr())
	}
}
