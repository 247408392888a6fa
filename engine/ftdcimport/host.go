package ftdcimport

import (
	"math"
	"slices"
	"strings"

	"wtd/engine/store"
	"wtd/internal/ftdc"
)

// HostSource is where an import puts the host figures of FTDC's
// systemMetrics that mean what wtd's own host metrics mean
// (hostctl.Collector): the same source and names, the same units.
const HostSource = "host"

const systemMetrics = "systemMetrics."

// cpuStates are the states of /proc/stat's cpu line that wtd's cpu.* shares
// are made of (guest and guest_nice are part of user and nice already), as
// hostctl's cpuPercent counts them; FTDC has each as cpu.<state>_ms.
var cpuStates = []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// memFields are the /proc/meminfo figures FTDC keeps as memory.<name>_kb
// that wtd's host source has, in bytes, as mem.<name>.
var memFields = []struct{ ftdc, host string }{
	{"MemTotal", "mem.total"}, {"MemAvailable", "mem.available"}, {"MemFree", "mem.free"},
	{"Cached", "mem.cached"}, {"Buffers", "mem.buffers"}, {"Dirty", "mem.dirty"},
}

// diskFields are the /proc/diskstats counters of FTDC's disks.<dev> that
// wtd's disk.<dev>.* rates are made of.
var diskFields = []string{"reads", "writes", "read_sectors", "write_sectors", "io_time_ms"}

// diskSectorBytes is the unit of /proc/diskstats' sector counts, 512
// whatever the device's sector size.
const diskSectorBytes = 512

// hostMap says where a schema's systemMetrics go in the host source.
// Counters become per-second rates and shares against the sample before,
// as the live collector computes them between two reads.
type hostMap struct {
	names []string // the host metrics, in the order below
	at    int      // systemMetrics.start: the collector's own time, -1 without
	cpu   []int    // the chunk's index of each cpuStates, -1 when absent
	count int      // cpu.num_cpus (num_logical_cores from 8.0), -1 when absent
	mem   []int    // the index of each memFields, -1 when absent
	swap  [2]int   // SwapTotal_kb, SwapFree_kb
	disks []hostDisk
	// mapped are the chunk's metrics stored only as host metrics.
	mapped map[int]bool
}

type hostDisk struct {
	name string
	idx  [5]int // diskFields
}

// newHostMap finds the systemMetrics of chunk c (Names, the role of the
// 8.0 sharded layout dropped) that wtd's host source has.
func newHostMap(c *ftdc.Chunk) *hostMap {
	hm := &hostMap{at: -1, count: -1, swap: [2]int{-1, -1}, mapped: map[int]bool{}}
	idx := map[string]int{}
	var disks []string
	for i, n := range c.Names {
		rest, ok := strings.CutPrefix(n, systemMetrics)
		if !ok {
			continue
		}
		idx[rest] = i
		if d, f, ok := strings.Cut(strings.TrimPrefix(rest, "disks."), "."); ok && strings.HasPrefix(rest, "disks.") && f == "reads" {
			disks = append(disks, d)
		}
	}
	if len(idx) == 0 {
		return hm
	}
	find := func(name string, mapped bool) int {
		i, ok := idx[name]
		if !ok {
			return -1
		}
		if mapped {
			hm.mapped[i] = true
		}
		return i
	}
	hm.at = find("start", false)
	all := true
	for _, s := range cpuStates {
		i := find("cpu."+s+"_ms", false)
		hm.cpu = append(hm.cpu, i)
		all = all && i >= 0
	}
	if all {
		// A share needs every state: without one the total is wrong.
		for _, i := range hm.cpu {
			hm.mapped[i] = true
		}
		for _, s := range cpuStates {
			hm.names = append(hm.names, "cpu."+s)
		}
	} else {
		hm.cpu = nil
	}
	if hm.count = find("cpu.num_cpus", true); hm.count < 0 {
		hm.count = find("cpu.num_logical_cores", true)
	}
	if hm.count >= 0 {
		hm.names = append(hm.names, "cpu.count")
	}
	for _, f := range memFields {
		i := find("memory."+f.ftdc+"_kb", true)
		hm.mem = append(hm.mem, i)
		if i >= 0 {
			hm.names = append(hm.names, f.host)
		}
	}
	if hm.mem[0] >= 0 && hm.mem[1] >= 0 {
		hm.names = append(hm.names, "mem.used")
	}
	// Swap in use is a difference: its two figures stay as they are too.
	hm.swap = [2]int{find("memory.SwapTotal_kb", false), find("memory.SwapFree_kb", false)}
	if hm.swap[0] >= 0 && hm.swap[1] >= 0 {
		hm.names = append(hm.names, "mem.swap_used")
	}
	slices.Sort(disks)
	for _, d := range disks {
		hd := hostDisk{name: d}
		ok := true
		for k, f := range diskFields {
			hd.idx[k] = find("disks."+d+"."+f, false)
			ok = ok && hd.idx[k] >= 0
		}
		if !ok {
			continue
		}
		for _, i := range hd.idx {
			hm.mapped[i] = true
		}
		hm.disks = append(hm.disks, hd)
		for _, f := range []string{"read_bytes", "write_bytes", "reads", "writes", "util_pct"} {
			hm.names = append(hm.names, "disk."+d+"."+f)
		}
	}
	return hm
}

// hostPrev is a process's last systemMetrics sample, for the rates of the
// next: counters by their index in hostPrev's own schema are no use across
// schemas, so they are kept by name.
type hostPrev struct {
	ok   bool
	at   int64 // ms
	cpu  [8]int64
	disk map[string][5]int64
}

// counterDelta is cur-prev for a counter, 0 when it went backwards (a
// device re-attached, a wrap), as hostctl's delta.
func counterDelta(prev, cur int64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

// hostValues fills out (len(hm.names) x len(keep), metric by metric) with
// the host metrics of the kept samples of c; NaN where a rate has no
// sample before it. prev is the process's last sample, and is updated.
func (hm *hostMap) hostValues(c *ftdc.Chunk, keep []int, prev *hostPrev, out []float64) {
	n := len(keep)
	val := func(i, s int) int64 { return c.Values[i*c.Samples+s] }
	for k, s := range keep {
		at := c.Times[s]
		if hm.at >= 0 {
			at = val(hm.at, s)
		}
		dt := float64(at - prev.at) // ms
		rates := prev.ok && dt > 0
		m := 0
		put := func(v float64) {
			out[m*n+k] = v
			m++
		}
		if hm.cpu != nil {
			var d [8]float64
			var cur [8]int64
			total := 0.0
			for j, i := range hm.cpu {
				cur[j] = val(i, s)
				d[j] = counterDelta(prev.cpu[j], cur[j])
				total += d[j]
			}
			for j := range d {
				if rates && total > 0 {
					put(100 * d[j] / total)
				} else {
					put(math.NaN())
				}
			}
			prev.cpu = cur
		}
		if hm.count >= 0 {
			put(float64(val(hm.count, s)))
		}
		for _, i := range hm.mem {
			if i >= 0 {
				put(float64(val(i, s)) * 1024)
			}
		}
		if hm.mem[0] >= 0 && hm.mem[1] >= 0 {
			put(float64(max(val(hm.mem[0], s)-val(hm.mem[1], s), 0)) * 1024)
		}
		if hm.swap[0] >= 0 && hm.swap[1] >= 0 {
			put(float64(max(val(hm.swap[0], s)-val(hm.swap[1], s), 0)) * 1024)
		}
		if prev.disk == nil {
			prev.disk = map[string][5]int64{}
		}
		for _, d := range hm.disks {
			var cur [5]int64
			for j, i := range d.idx {
				cur[j] = val(i, s)
			}
			p, seen := prev.disk[d.name]
			if rates && seen {
				secs := dt / 1000
				put(counterDelta(p[2], cur[2]) * diskSectorBytes / secs)
				put(counterDelta(p[3], cur[3]) * diskSectorBytes / secs)
				put(counterDelta(p[0], cur[0]) / secs)
				put(counterDelta(p[1], cur[1]) / secs)
				put(min(100*counterDelta(p[4], cur[4])/dt, 100))
			} else {
				for range 5 {
					put(math.NaN())
				}
			}
			prev.disk[d.name] = cur
		}
		prev.ok, prev.at = true, at
	}
}

// addHost stores the host metrics of a chunk's kept samples: the runs of
// samples that have every metric as blocks, the others (the first of a
// process, whose rates have no sample before) one by one without the
// metrics they lack.
func (im *importer) addHost(run int64, hm *hostMap, c *ftdc.Chunk, prev *hostPrev) {
	if len(hm.names) == 0 || len(im.keep) == 0 {
		return
	}
	n := len(im.keep)
	im.hostBuf = slices.Grow(im.hostBuf[:0], len(hm.names)*n)[:len(hm.names)*n]
	hm.hostValues(c, im.keep, prev, im.hostBuf)
	complete := func(k int) bool {
		for m := range hm.names {
			if math.IsNaN(im.hostBuf[m*n+k]) {
				return false
			}
		}
		return true
	}
	for k := 0; k < n; {
		if !complete(k) {
			one := make(map[string]float64, len(hm.names))
			for m, name := range hm.names {
				if v := im.hostBuf[m*n+k]; !math.IsNaN(v) {
					one[name] = v
				}
			}
			im.st.AddSample(run, HostSource, im.ts[k], one)
			k++
			continue
		}
		end := k + 1
		for end < n && complete(end) {
			end++
		}
		// AddBlock copies the values and times: one buffer does.
		im.hostBlk = im.hostBlk[:0]
		for m := range hm.names {
			im.hostBlk = append(im.hostBlk, im.hostBuf[m*n+k:m*n+end]...)
		}
		im.st.AddBlock(run, HostSource, store.Block{Names: hm.names, TS: im.ts[k:end], Values: im.hostBlk})
		k = end
	}
}
