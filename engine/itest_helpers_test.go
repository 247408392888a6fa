package engine

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/engine/store"
	"wtd/hostctl"
	"wtd/internal/testbin"
)

// startTestServerBinary returns the minimongod the tests start.
func startTestServerBinary(t testing.TB) string { return testbin.Minimongod(t) }

// lockedBuffer collects a process's output; the process writes while a
// failing test may read.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTestServer starts minimongod on a free loopback port with a fresh
// dbpath and a 0.25 GB cache, waits until it answers hello and returns a
// connected client and the server's URI. The client is disconnected and
// the process killed when the test ends; the process also dies with the
// test binary (Pdeathsig).
func startTestServer(t testing.TB) (*mongo.Client, string) {
	t.Helper()
	return startTestServerWith(t, "--wiredTigerCacheSizeGB", "0.25")
}

// startTestServerWith is startTestServer with minimongod arguments of the
// caller's choice after --port, --bind_ip and --dbpath.
func startTestServerWith(t testing.TB, args ...string) (*mongo.Client, string) {
	t.Helper()
	bin := startTestServerBinary(t)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken before minimongod binds it
		client, uri, err := startTestServerOnce(t, bin, args)
		if err == nil {
			return client, uri
		}
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil, ""
}

func startTestServerOnce(t testing.TB, bin string, args []string) (*mongo.Client, string, error) {
	port := testbin.FreePort(t)
	full := append([]string{"--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--dbpath", t.TempDir()}, args...)
	cmd := exec.Command(bin, full...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start minimongod: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	uri := fmt.Sprintf("mongodb://127.0.0.1:%d/?directConnection=true", port)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		kill()
		return nil, "", fmt.Errorf("connect to minimongod: %w", err)
	}
	if err := startTestServerWaitHello(client, exited); err != nil {
		_ = client.Disconnect(context.Background())
		kill()
		return nil, "", fmt.Errorf("minimongod on port %d: %w\n%s", port, err, out.String())
	}
	t.Cleanup(kill)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return client, uri, nil
}

// startTestServerWaitHello waits up to a minute (builds run in parallel on
// small machines) for the server to answer hello.
func startTestServerWaitHello(client *mongo.Client, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		attempt, stop := context.WithTimeout(ctx, 2*time.Second)
		err := client.Database("admin").RunCommand(attempt, bson.D{{Key: "hello", Value: 1}}).Err()
		stop()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before answering hello: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("no answer to hello within a minute: %w", err)
		case <-tick.C:
		}
	}
}

// pollUntil calls cond every 20 ms until it holds, and fails the test
// with what it was waiting for if it does not within `within`.
func pollUntil(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deadOwnersRun records a running run whose owner process has exited, as a
// wtd that was killed leaves it, and returns its id and the owner's pid.
func deadOwnersRun(ctx context.Context, t *testing.T, st *store.Store) (id int64, pid int) {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateRun(ctx, store.RunInfo{PlaybookPath: "p.lua", Playbook: "--", OwnerPID: dead.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	return id, dead.Process.Pid
}

// changing is a restart's change to the values s holds.
func changing(s hostctl.Settings) ServerChanges {
	return ServerChanges{SettingsChange: hostctl.ChangeOf(s)}
}
