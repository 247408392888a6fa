package itest

import (
	"testing"
	"time"
)

// shutdown sends no reply: the connection closes, which pymongo reports as
// AutoReconnect (a 21-byte OP_MSG without a document made its decoder
// fail with struct.error).
func TestShutdownFromPymongo(t *testing.T) {
	t.Parallel()
	s := start(t)
	out := runPymongo(t, s, `
try:
    client.admin.command('shutdown')
    print('replied')
except pymongo.errors.AutoReconnect:
    print('connection closed')
`)
	if out != "connection closed" {
		t.Errorf("pymongo shutdown: %q, want the connection closed", out)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown did not stop the server")
	}
}
