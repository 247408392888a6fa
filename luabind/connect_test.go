package luabind

import (
	"strconv"
	"testing"
	"time"

	"wtd/engine"
	"wtd/internal/fakemongod"
	"wtd/internal/testbin"
)

func TestMongodConnect(t *testing.T) {
	fake := fakemongod.StartAdvertising(t)
	rec := &fakemongod.Recorder{}
	tr := newTestRun(t, func(c *engine.Config) { c.StartOptions.Dialer = rec })
	closed := testbin.FreePort(t)

	start := time.Now()
	tr.mustRunFile(t, "connect_test.lua", tr.env(map[string]string{"closed": strconv.Itoa(closed), "fake": fake.URI()}))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the checks took %s: a refusal or the closed port waited", d)
	}
	closedAddr := "127.0.0.1:" + strconv.Itoa(closed)
	for _, a := range rec.Addrs() {
		if a != fake.Addr() && a != closedAddr {
			t.Errorf("dialled %s; want only %s and %s", a, fake.Addr(), closedAddr)
		}
	}
}
