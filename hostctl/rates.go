package hostctl

import "time"

// delta is cur-prev for counters, zero when a counter went backwards
// (a device re-attached, a wrap): a reset is not negative throughput.
func delta(prev, cur uint64) uint64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}

// cpuPercent turns two /proc/stat snapshots into the share of CPU time
// spent in each state, in percent of all CPUs. With a zero prev it is the
// share since boot. When no time passed every state is zero.
func cpuPercent(prev, cur cpuTimes) map[string]float64 {
	d := cpuTimes{
		User:    delta(prev.User, cur.User),
		Nice:    delta(prev.Nice, cur.Nice),
		System:  delta(prev.System, cur.System),
		Idle:    delta(prev.Idle, cur.Idle),
		Iowait:  delta(prev.Iowait, cur.Iowait),
		IRQ:     delta(prev.IRQ, cur.IRQ),
		SoftIRQ: delta(prev.SoftIRQ, cur.SoftIRQ),
		Steal:   delta(prev.Steal, cur.Steal),
	}
	total := float64(d.total())
	pct := func(v uint64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * float64(v) / total
	}
	return map[string]float64{
		"cpu.user":    pct(d.User),
		"cpu.nice":    pct(d.Nice),
		"cpu.system":  pct(d.System),
		"cpu.idle":    pct(d.Idle),
		"cpu.iowait":  pct(d.Iowait),
		"cpu.irq":     pct(d.IRQ),
		"cpu.softirq": pct(d.SoftIRQ),
		"cpu.steal":   pct(d.Steal),
	}
}

// diskRates gives per-second rates and utilisation for every device present
// in both snapshots, taken dt apart. With dt <= 0 there are no rates.
func diskRates(prev, cur map[string]diskStat, dt time.Duration) map[string]float64 {
	out := make(map[string]float64)
	secs := dt.Seconds()
	if secs <= 0 {
		return out
	}
	for name, c := range cur {
		p, ok := prev[name]
		if !ok {
			continue
		}
		pre := "disk." + name + "."
		out[pre+"read_bytes"] = float64(delta(p.ReadBytes, c.ReadBytes)) / secs
		out[pre+"write_bytes"] = float64(delta(p.WriteBytes, c.WriteBytes)) / secs
		out[pre+"reads"] = float64(delta(p.Reads, c.Reads)) / secs
		out[pre+"writes"] = float64(delta(p.Writes, c.Writes)) / secs
		util := 100 * float64(delta(p.IOTimeMs, c.IOTimeMs)) / (secs * 1000)
		if util > 100 {
			util = 100
		}
		out[pre+"util_pct"] = util
	}
	return out
}

// procRates gives a watched process's CPU share (percent of one CPU, so a
// busy process with four threads can show 400) and its storage I/O in
// bytes per second between two snapshots dt apart. clkTck is USER_HZ.
func procRates(label string, prev, cur procStat, dt time.Duration, clkTck float64) map[string]float64 {
	out := make(map[string]float64)
	secs := dt.Seconds()
	if secs <= 0 || clkTck <= 0 {
		return out
	}
	pre := "proc." + label + "."
	ticks := delta(prev.UTime+prev.STime, cur.UTime+cur.STime)
	out[pre+"cpu_pct"] = 100 * float64(ticks) / clkTck / secs
	if prev.HasIO && cur.HasIO {
		out[pre+"read_bytes"] = float64(delta(prev.ReadBytes, cur.ReadBytes)) / secs
		out[pre+"write_bytes"] = float64(delta(prev.WriteBytes, cur.WriteBytes)) / secs
	}
	return out
}
