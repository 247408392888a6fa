package engine

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

// newConnectRun starts a run, with no server binary and the sampler off,
// whose driver connections go through dialer.
func newConnectRun(t *testing.T, dialer *fakemongod.Recorder) *Run {
	t.Helper()
	var cfg Config
	if dialer != nil {
		cfg.StartOptions.Dialer = dialer
	}
	r, _, _ := startTestRun(t, cfg)
	return r
}

func TestConnectServerStaysOnTheGivenHost(t *testing.T) {
	fake := fakemongod.StartAdvertising(t)
	rec := &fakemongod.Recorder{}
	r := newConnectRun(t, rec)
	ctx := context.Background()
	s, err := r.ConnectServer(ctx, fake.URI(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"ping", "buildInfo", "ping"} {
		if _, err := s.Command(ctx, bson.D{{Key: cmd, Value: 1}}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // time for a discovering driver to dial the advertised host
	if foreign := rec.Foreign(fake.Addr()); len(foreign) > 0 || len(rec.Addrs()) == 0 {
		t.Errorf("dialled %q; want only %s", rec.Addrs(), fake.Addr())
	}

	for uri, want := range map[string]string{
		fake.URI() + "/?replicaSet=rs0":                 "URI option replicaSet is refused",
		"mongodb://" + fake.Addr() + ",10.1.2.3:27017/": "the URI names 2 hosts",
		"mongodb://10.1.2.3:27017/":                     "is not a loopback address",
	} {
		if _, err := r.ConnectServer(ctx, uri, time.Second); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ConnectServer(%s) = %v, want %q", uri, err, want)
		}
	}
	if foreign := rec.Foreign(fake.Addr()); len(foreign) > 0 {
		t.Errorf("refused URIs dialled %q", foreign)
	}
}

func TestConnectServerRefusesSRVBeforeAnyLookup(t *testing.T) {
	r := newConnectRun(t, nil)
	lookups := 0
	old := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		lookups++
		return nil, errors.New("test: no DNS lookup may happen")
	}}
	defer func() { net.DefaultResolver = old }()
	start := time.Now()
	_, err := r.ConnectServer(context.Background(), "mongodb+srv://user:hunter2@cluster0.example.net/", 0)
	if err == nil || !strings.Contains(err.Error(), "mongodb+srv:// URIs are refused") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("ConnectServer(mongodb+srv://...) = %v, want the refusal without the password", err)
	}
	if lookups != 0 || time.Since(start) > 100*time.Millisecond {
		t.Errorf("%d lookups, %s", lookups, time.Since(start))
	}
}

func TestConnectServerClosedPortFailsInOneLine(t *testing.T) {
	r := newConnectRun(t, nil)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(testbin.FreePort(t)))
	start := time.Now()
	_, err := r.ConnectServer(context.Background(), "mongodb://"+addr+"/", 0)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("failing took %s", d)
	}
	if want := "connect " + addr + ": connection refused"; err == nil || err.Error() != want {
		t.Fatalf("ConnectServer to a closed port = %v, want %q", err, want)
	}
}
