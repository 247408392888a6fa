package hostctl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
)

// Collector samples host and process metrics into a flat map with dotted
// names. Rates (CPU shares, disk and process throughput) are computed
// against the previous Collect. A Collector is safe for concurrent use;
// calls to Collect are serialised.
type Collector struct {
	host     *Host
	now      func() time.Time
	clkTck   float64
	pageSize uint64

	mu        sync.Mutex
	watched   map[int32]string // pid -> label used in metric names
	prevAt    time.Time
	prevCPU   cpuTimes
	prevDisks map[string]diskStat
	prevProcs map[int32]procStat
}

// MetricsCollector is another name for [Collector].
type MetricsCollector = Collector

// NewCollector returns a collector that also watches the given processes,
// named proc.<pid>.* in the metrics.
func (h *Host) NewCollector(pids ...int32) *Collector {
	c := &Collector{
		host:     h,
		now:      time.Now,
		clkTck:   cpu.ClocksPerSec,
		pageSize: uint64(os.Getpagesize()),
	}
	c.SetPIDs(pids)
	return c
}

// SetPIDs replaces the watched processes; each is named by its pid.
func (c *Collector) SetPIDs(pids []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watched = make(map[int32]string, len(pids))
	for _, p := range pids {
		c.watched[p] = strconv.Itoa(int(p))
	}
}

// Watch adds a process whose metrics are named proc.<name>.*, replacing
// any process watched under that name before (a restarted mongod keeps its
// name and gets a new pid).
func (c *Collector) Watch(name string, pid int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, n := range c.watched {
		if n == name {
			delete(c.watched, p)
		}
	}
	c.watched[pid] = name
}

// Collect reads every sub-collector (cpu, mem, load, disk, proc) and returns
// what worked. When some failed, the map still holds the others and the
// error is a *CollectError naming the failed ones. A watched process that
// has exited is skipped, not an error.
//
// Metrics: cpu.{user,nice,system,idle,iowait,irq,softirq,steal} in percent
// since the previous Collect (since boot on the first), cpu.count;
// mem.{total,available,used,free,cached,buffers,dirty,writeback,swap_used}
// in bytes (used = total - available); load.{1,5,15};
// disk.<dev>.{read_bytes,write_bytes,reads,writes} per second and
// disk.<dev>.util_pct; proc.<label>.{cpu_pct,rss,read_bytes,write_bytes}
// with rss in bytes and the rest per second. Disk and process rates appear
// from the second observation on.
func (c *Collector) Collect(ctx context.Context) (map[string]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("collect host metrics: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	var dt time.Duration
	if !c.prevAt.IsZero() {
		dt = now.Sub(c.prevAt)
	}
	out := make(map[string]float64, 64)
	var cerr CollectError
	steps := []struct {
		name string
		run  func(map[string]float64, time.Duration) error
	}{
		{"cpu", c.collectCPU},
		{"mem", c.collectMem},
		{"load", c.collectLoad},
		{"disk", c.collectDisks},
		{"proc", c.collectProcs},
	}
	for _, s := range steps {
		if err := s.run(out, dt); err != nil {
			cerr.Failures = append(cerr.Failures, CollectFailure{Collector: s.name, Err: err})
		}
	}
	c.prevAt = now
	if len(cerr.Failures) > 0 {
		return out, &cerr
	}
	return out, nil
}

func (c *Collector) collectCPU(out map[string]float64, _ time.Duration) error {
	f, err := os.Open(c.host.procPath("stat"))
	if err != nil {
		return err
	}
	defer f.Close()
	cur, err := parseCPUStat(f)
	if err != nil {
		return fmt.Errorf("parse %s: %w", f.Name(), err)
	}
	for k, v := range cpuPercent(c.prevCPU, cur) {
		out[k] = v
	}
	out["cpu.count"] = float64(cur.Count)
	c.prevCPU = cur
	return nil
}

func (c *Collector) collectMem(out map[string]float64, _ time.Duration) error {
	m, err := c.host.Meminfo()
	if err != nil {
		return err
	}
	out["mem.total"] = float64(m.MemTotal)
	out["mem.available"] = float64(m.MemAvailable)
	out["mem.used"] = float64(delta(m.MemAvailable, m.MemTotal))
	out["mem.free"] = float64(m.MemFree)
	out["mem.cached"] = float64(m.Cached)
	out["mem.buffers"] = float64(m.Buffers)
	out["mem.dirty"] = float64(m.Dirty)
	out["mem.writeback"] = float64(m.Writeback)
	out["mem.swap_used"] = float64(delta(m.SwapFree, m.SwapTotal))
	return nil
}

func (c *Collector) collectLoad(out map[string]float64, _ time.Duration) error {
	b, err := os.ReadFile(c.host.procPath("loadavg"))
	if err != nil {
		return err
	}
	l, err := parseLoadavg(string(b))
	if err != nil {
		return err
	}
	out["load.1"], out["load.5"], out["load.15"] = l.Load1, l.Load5, l.Load15
	return nil
}

func (c *Collector) collectDisks(out map[string]float64, dt time.Duration) error {
	f, err := os.Open(c.host.procPath("diskstats"))
	if err != nil {
		return err
	}
	defer f.Close()
	cur, err := parseDiskstats(f)
	if err != nil {
		return fmt.Errorf("parse %s: %w", f.Name(), err)
	}
	if whole := c.host.blockDevices(); whole != nil {
		for name := range cur {
			if !whole[strings.ReplaceAll(name, "/", "!")] {
				delete(cur, name)
			}
		}
	}
	for k, v := range diskRates(c.prevDisks, cur, dt) {
		out[k] = v
	}
	c.prevDisks = cur
	return nil
}

// blockDevices returns the whole-disk names under <sys>/block, or nil when
// that directory cannot be read (then partitions are reported too).
func (h *Host) blockDevices() map[string]bool {
	ents, err := os.ReadDir(h.sysPath("block"))
	if err != nil || len(ents) == 0 {
		return nil
	}
	m := make(map[string]bool, len(ents))
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

func (c *Collector) collectProcs(out map[string]float64, dt time.Duration) error {
	cur := make(map[int32]procStat, len(c.watched))
	var errs []error
	for _, pid := range sortedPIDs(c.watched) {
		label := c.watched[pid]
		st, err := c.host.readPIDStat(pid)
		if gone(err) {
			continue // the process has exited: not an error
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
			continue
		}
		if err := c.host.readPIDIO(pid, &st); err != nil && !gone(err) {
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
		}
		cur[pid] = st
		out["proc."+label+".rss"] = float64(st.RSSPages * c.pageSize)
		if prev, ok := c.prevProcs[pid]; ok {
			for k, v := range procRates(label, prev, st, dt, c.clkTck) {
				out[k] = v
			}
		}
	}
	c.prevProcs = cur
	return errors.Join(errs...)
}

// gone says whether err means the process no longer exists.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// readPIDStat reads <proc>/<pid>/stat.
func (h *Host) readPIDStat(pid int32) (procStat, error) {
	b, err := os.ReadFile(h.procPath(strconv.Itoa(int(pid)), "stat"))
	if err != nil {
		return procStat{}, err
	}
	st, err := parsePIDStat(string(b))
	if err != nil {
		return procStat{}, fmt.Errorf("parse stat: %w", err)
	}
	return st, nil
}

// readPIDIO fills the I/O counters of st from <proc>/<pid>/io, which only
// the process owner and root may read.
func (h *Host) readPIDIO(pid int32, st *procStat) error {
	f, err := os.Open(h.procPath(strconv.Itoa(int(pid)), "io"))
	if err != nil {
		return err
	}
	defer f.Close()
	r, w, err := parsePIDIO(f)
	if err != nil {
		return fmt.Errorf("parse %s: %w", f.Name(), err)
	}
	st.ReadBytes, st.WriteBytes, st.HasIO = r, w, true
	return nil
}

func sortedPIDs(m map[int32]string) []int32 {
	pids := make([]int32, 0, len(m))
	for p := range m {
		pids = append(pids, p)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	return pids
}

// CollectFailure is one sub-collector that failed during a Collect.
type CollectFailure struct {
	Collector string // cpu, mem, load, disk or proc
	Err       error
}

// CollectError reports the sub-collectors that failed in one Collect; the
// metrics of the others were still returned.
type CollectError struct {
	Failures []CollectFailure
}

// Failed names the sub-collectors that failed.
func (e *CollectError) Failed() []string {
	names := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		names[i] = f.Collector
	}
	return names
}

func (e *CollectError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Collector + ": " + f.Err.Error()
	}
	return "collect host metrics: " + strings.Join(parts, "; ")
}

// Unwrap returns the individual failures.
func (e *CollectError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f.Err
	}
	return errs
}
