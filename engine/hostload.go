package engine

import (
	"strings"
	"sync"
	"wtd/engine/record"
)

// hostLoadTracker gathers the host samples of a step.
type hostLoadTracker struct {
	mu     sync.Mutex
	n      int
	sums   [6]float64 // cores, load1, busy, others, steal, others' I/O
	counts [6]int
}

// observe adds one host sample: the collector's names (cpu.*, load.1,
// cpu.count, disk.DEV.read_bytes/write_bytes, proc.LABEL.cpu_pct and
// read_bytes/write_bytes of the watched processes).
func (t *hostLoadTracker) observe(m map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	add := func(i int, v float64) { t.sums[i] += v; t.counts[i]++ }
	cores, hasCores := m["cpu.count"]
	if hasCores {
		add(0, cores)
	}
	if v, ok := m["load.1"]; ok {
		add(1, v)
	}
	idle, hasIdle := m["cpu.idle"]
	if hasIdle {
		busy := 100 - idle - m["cpu.iowait"]
		add(2, busy)
		var own float64
		for k, v := range m {
			if strings.HasPrefix(k, "proc.") && strings.HasSuffix(k, ".cpu_pct") {
				own += v
			}
		}
		if hasCores && cores > 0 {
			add(3, max(0, busy-own/cores))
		}
	}
	if v, ok := m["cpu.steal"]; ok {
		add(4, v)
	}
	var disk, ownIO float64
	seen := false
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, "disk.") && (strings.HasSuffix(k, ".read_bytes") || strings.HasSuffix(k, ".write_bytes")):
			disk += v
			seen = true
		case strings.HasPrefix(k, "proc.") && (strings.HasSuffix(k, ".read_bytes") || strings.HasSuffix(k, ".write_bytes")):
			ownIO += v
		}
	}
	if seen {
		add(5, max(0, disk-ownIO))
	}
}

// load is the step's HostLoad (nil when no host sample came).
func (t *hostLoadTracker) load() *record.HostLoad {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return nil
	}
	mean := func(i int) *float64 {
		if t.counts[i] == 0 {
			return nil
		}
		v := t.sums[i] / float64(t.counts[i])
		return &v
	}
	return &record.HostLoad{Samples: t.n, Cores: mean(0), Load1: mean(1), BusyPct: mean(2), OthersCPUPct: mean(3), StealPct: mean(4),
		OthersIOBytesPerSec: mean(5)}
}
