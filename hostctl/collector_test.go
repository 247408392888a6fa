package hostctl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// stepClock is a clock that moves only when told.
type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time { return c.t }

func newTestCollector(h *Host, pids ...int32) (*Collector, *stepClock) {
	c := h.NewCollector(pids...)
	clk := &stepClock{t: time.Unix(1700000000, 0)}
	c.now = clk.now
	c.clkTck = 100
	c.pageSize = 4096
	return c, clk
}

func TestCollectFixture(t *testing.T) {
	h := copyFixture(t)
	c, clk := newTestCollector(h)
	c.Watch("mongod", 4242)
	c.Watch("gone", 999999) // not in the fixture: skipped, not an error
	ctx := context.Background()

	first, err := c.Collect(ctx)
	if err != nil {
		t.Fatalf("first collect: %v", err)
	}
	const k = 1024
	wantFirst := map[string]float64{
		// since boot: total 10000 ticks
		"cpu.user": 10, "cpu.nice": 0.1, "cpu.system": 5, "cpu.idle": 80, "cpu.iowait": 3,
		"cpu.irq": 0.2, "cpu.softirq": 0.3, "cpu.steal": 1.4, "cpu.count": 4,
		"mem.total": 24683584 * k, "mem.available": 23332380 * k, "mem.used": (24683584 - 23332380) * k,
		"mem.free": 20213996 * k, "mem.cached": 2299232 * k, "mem.buffers": 3816 * k, "mem.dirty": 184 * k,
		"mem.writeback": 12 * k, "mem.swap_used": (2097148 - 2096124) * k,
		"load.1": 0.52, "load.5": 0.58, "load.15": 0.59,
		"proc.mongod.rss": 25600 * 4096,
	}
	if d := cmp.Diff(wantFirst, first, cmpFloat); d != "" {
		t.Errorf("first collect (-want +got):\n%s", d)
	}

	// One second later: 100 more ticks (50 user, 50 idle), sda read 1 MiB
	// in 10 reads and was busy 250 ms, mongod used 20 ticks and wrote 4 KiB.
	clk.t = clk.t.Add(time.Second)
	writeFile(t, filepath.Join(h.ProcRoot, "stat"), "cpu  1050 10 500 8050 300 20 30 140 0 0\ncpu0 1 1 1 1\n")
	writeFile(t, filepath.Join(h.ProcRoot, "diskstats"),
		"   8       0 sda 4010 100 802048 3000 2000 50 400000 6000 0 5250 9000 0 0 0 0\n"+
			"   8       1 sda1 3910 100 792048 2900 1990 50 399000 5900 0 5150 8800 0 0 0 0\n")
	writeFile(t, filepath.Join(h.ProcRoot, "4242", "stat"),
		"4242 (mongod (x)) S 1 4242 4242 0 -1 4194560 5000 0 0 0 265 55 0 0 20 0 30 0 123456 1234567890 25601 0")
	writeFile(t, filepath.Join(h.ProcRoot, "4242", "io"), "read_bytes: 409600\nwrite_bytes: 823296\n")

	second, err := c.Collect(ctx)
	if err != nil {
		t.Fatalf("second collect: %v", err)
	}
	want := map[string]float64{
		"cpu.user": 50, "cpu.idle": 50, "cpu.nice": 0, "cpu.system": 0, "cpu.iowait": 0,
		"cpu.irq": 0, "cpu.softirq": 0, "cpu.steal": 0, "cpu.count": 1,
		// sda1 is a partition (not under sys/block): not reported.
		"disk.sda.reads": 10, "disk.sda.read_bytes": 2048 * 512, "disk.sda.writes": 0,
		"disk.sda.write_bytes": 0, "disk.sda.util_pct": 25,
		"proc.mongod.cpu_pct": 20, "proc.mongod.rss": 25601 * 4096,
		"proc.mongod.read_bytes": 0, "proc.mongod.write_bytes": 4096,
	}
	for key, w := range want {
		g, ok := second[key]
		if !ok {
			t.Errorf("%s missing", key)
			continue
		}
		if diff := g - w; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s = %v, want %v", key, g, w)
		}
	}
	for key := range second {
		if len(key) > 9 && key[:9] == "proc.gone" || key == "disk.sda1.reads" {
			t.Errorf("unexpected metric %s", key)
		}
	}
}

var cmpFloat = cmp.Comparer(func(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
})

func TestCollectPartialFailure(t *testing.T) {
	h := copyFixture(t)
	if err := os.Remove(filepath.Join(h.ProcRoot, "loadavg")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.ProcRoot, "diskstats"), "8 0 sda x 0 0 0 0 0 0 0 0 0 0\n")
	c, _ := newTestCollector(h)
	got, err := c.Collect(context.Background())
	var ce *CollectError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *CollectError", err)
	}
	if d := cmp.Diff([]string{"load", "disk"}, ce.Failed()); d != "" {
		t.Errorf("Failed (-want +got):\n%s", d)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err %v does not unwrap to ErrNotExist", err)
	}
	for _, key := range []string{"cpu.user", "mem.total", "cpu.count"} {
		if _, ok := got[key]; !ok {
			t.Errorf("%s missing although its collector worked", key)
		}
	}
	if _, ok := got["load.1"]; ok {
		t.Error("load.1 present although loadavg is missing")
	}
}

func TestCollectSetPIDs(t *testing.T) {
	c, _ := newTestCollector(fixtureHost(), 1)
	c.SetPIDs([]int32{4242})
	got, err := c.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["proc.4242.rss"]; !ok {
		t.Errorf("proc.4242.rss missing: %v", got)
	}
}

func TestCollectCancelled(t *testing.T) {
	c, _ := newTestCollector(fixtureHost())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Collect(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCollectRealHost(t *testing.T) {
	c := NewHost().NewCollector(int32(os.Getpid()))
	ctx := context.Background()
	if _, err := c.Collect(ctx); err != nil {
		t.Fatalf("first collect on this host: %v", err)
	}
	got, err := c.Collect(ctx)
	if err != nil {
		t.Fatalf("second collect on this host: %v", err)
	}
	for _, key := range []string{"cpu.idle", "mem.total", "load.1", "proc." + itoa(os.Getpid()) + ".rss"} {
		if _, ok := got[key]; !ok {
			t.Errorf("%s missing", key)
		}
	}
	if got["mem.total"] <= 0 {
		t.Errorf("mem.total = %v", got["mem.total"])
	}
}
