package engine

import (
	"fmt"
	"strings"
	"sync"
)

// HostLoad is how busy the host was during a step, from the host samples
// taken during it: means over the samples. A field the samples lacked is
// nil (not measured), never 0.
type HostLoad struct {
	Samples int      `json:"samples"`
	Cores   *float64 `json:"cores"`
	Load1   *float64 `json:"load1"` // the 1-minute load average
	// BusyPct is the CPU in use (not idle, not waiting for I/O), in
	// percent of all the host's CPUs.
	BusyPct *float64 `json:"busy_pct"`
	// OthersCPUPct is the part of BusyPct that neither wtd nor the servers
	// the run watches used: other processes' work (and the kernel's).
	OthersCPUPct *float64 `json:"others_cpu_pct"`
	// StealPct is the time a hypervisor gave the host's CPUs to others.
	StealPct *float64 `json:"steal_pct"`
	// OthersIOBytesPerSec is the disks' reads and writes that neither wtd
	// nor the watched servers made, in bytes a second.
	OthersIOBytesPerSec *float64 `json:"others_io_bytes_per_sec"`
}

// Thresholds past which a step's host counts as busy: its figures then
// depend on other work as much as on what the step measured.
const (
	BusyOthersCPUPct = 25.0 // other processes used a quarter of the host's CPU
	BusyStealPct     = 10.0
	BusyOthersIO     = 20e6 // 20 MB/s of other processes' disk traffic
)

// Busy says why the host was too busy during the step for its figures to
// be compared ("" when it was not, or was not measured).
func (h *HostLoad) Busy() string {
	if h == nil || h.Samples == 0 {
		return ""
	}
	var why []string
	if h.OthersCPUPct != nil && *h.OthersCPUPct >= BusyOthersCPUPct {
		why = append(why, fmt.Sprintf("%.0f%% CPU by other processes", *h.OthersCPUPct))
	}
	if h.StealPct != nil && *h.StealPct >= BusyStealPct {
		why = append(why, fmt.Sprintf("%.0f%% CPU stolen by the hypervisor", *h.StealPct))
	}
	if h.OthersIOBytesPerSec != nil && *h.OthersIOBytesPerSec >= BusyOthersIO {
		why = append(why, fmt.Sprintf("%.0f MB/s of other processes' disk I/O", *h.OthersIOBytesPerSec/1e6))
	}
	if len(why) == 0 {
		return ""
	}
	if h.Load1 != nil && h.Cores != nil {
		why = append([]string{fmt.Sprintf("load %.1f on %.0f cores", *h.Load1, *h.Cores)}, why...)
	}
	return strings.Join(why, ", ")
}

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
func (t *hostLoadTracker) load() *HostLoad {
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
	return &HostLoad{Samples: t.n, Cores: mean(0), Load1: mean(1), BusyPct: mean(2), OthersCPUPct: mean(3), StealPct: mean(4),
		OthersIOBytesPerSec: mean(5)}
}
