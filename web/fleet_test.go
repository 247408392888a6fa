package web

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wtd/engine/store"
	"wtd/fleet"
)

// TestFleetPageOfAResultsStoreThatIsDown: the page says the store cannot
// be read, with its URI's password masked, within the page's timeout.
func TestFleetPageOfAResultsStoreThatIsDown(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(ctx) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	uri := fmt.Sprintf("mongodb://wtd:hunter2@%s/?serverSelectionTimeoutMS=300", addr)
	srv := httptest.NewServer(New(Options{Store: st, Scheduler: dashScheduler{}, Results: fleet.Config{URI: uri, Timeout: time.Second}}))
	t.Cleanup(srv.Close)
	start := time.Now()
	code, body := get(t, srv.URL+"/fleet")
	if code != 502 || !strings.Contains(body, "The results store mongodb://wtd:xxxxx@"+addr) || strings.Contains(body, "hunter2") {
		t.Errorf("fleet page of a store that is down: %d\n%s", code, body)
	}
	if d := time.Since(start); d > fleetTimeout {
		t.Errorf("the page took %s", d)
	}
}
