package workload

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"wtd/internal/testbin"
)

// startTestServer starts minimongod on a free loopback port with a fresh
// dbpath and a 0.25 GB cache (see testbin.StartMinimongod) and returns a
// client connected to it, disconnected when the test ends, and the server.
func startTestServer(t testing.TB) (*mongo.Client, *testbin.Server) {
	t.Helper()
	srv := testbin.StartMinimongod(t, 0)
	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return client, srv
}

// cancelWhen is a progress function for Load and workloads that cancels
// with cause the first time ready(done) holds.
type cancelWhen struct {
	cancel    context.CancelCauseFunc
	cause     error
	ready     func(done int64) bool
	cancelled chan struct{} // closed when it has cancelled
}

func newCancelWhen(cancel context.CancelCauseFunc, cause error, ready func(done int64) bool) *cancelWhen {
	return &cancelWhen{cancel: cancel, cause: cause, ready: ready, cancelled: make(chan struct{})}
}

func (c *cancelWhen) progress(done, _ int64) {
	select {
	case <-c.cancelled:
	default:
		if c.ready(done) {
			c.cancel(c.cause)
			close(c.cancelled)
		}
	}
}

// stopsWithin runs f, whose progress goes to c, on its own goroutine and
// returns its outcome. The test fails if f has not got to the cancel
// within a minute, or has not returned `within` after it.
func stopsWithin[T any](t *testing.T, c *cancelWhen, within time.Duration, f func() (T, error)) (T, error) {
	t.Helper()
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := f()
		done <- outcome{v, err}
	}()
	var zero T
	select {
	case o := <-done:
		return o.v, o.err
	case <-c.cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the condition to cancel on did not come within a minute")
		return zero, nil
	}
	cancelled := time.Now()
	select {
	case o := <-done:
		t.Logf("returned %v after the cancel", time.Since(cancelled).Round(time.Millisecond))
		return o.v, o.err
	case <-time.After(within):
		t.Fatalf("still running %v after the cancel", within)
		return zero, nil
	}
}
