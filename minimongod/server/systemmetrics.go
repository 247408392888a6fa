package server

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// clockTicks is USER_HZ, the unit of /proc/stat's CPU times: 100 on every
// Linux architecture Go runs on.
const clockTicks = 100

// procCPUFields are /proc/stat's cpu columns, named as mongod's FTDC names
// them.
var procCPUFields = []string{"user_ms", "nice_ms", "system_ms", "idle_ms", "iowait_ms", "irq_ms", "softirq_ms", "steal_ms", "guest_ms", "guest_nice_ms"}

// procMemFields are the /proc/meminfo lines mongod's FTDC keeps.
var procMemFields = []string{"MemTotal", "MemFree", "Buffers", "Cached", "SwapCached", "Active", "Inactive",
	"Active(anon)", "Inactive(anon)", "Active(file)", "Inactive(file)", "SwapTotal", "SwapFree", "Dirty"}

// procDiskFields are /proc/diskstats' columns after the device name.
var procDiskFields = []string{"reads", "reads_merged", "read_sectors", "read_time_ms", "writes", "writes_merged",
	"write_sectors", "write_time_ms", "io_in_progress", "io_time_ms", "io_queued_ms"}

// appendSystemMetrics appends what mongod's Linux collector reads from
// /proc into systemMetrics: cpu (/proc/stat), memory (/proc/meminfo) and
// disks (/proc/diskstats, whole disks that have done I/O). root is "/" but
// for tests. A file that cannot be read leaves its section out.
func appendSystemMetrics(dst []byte, root string) []byte {
	if b, err := os.ReadFile(filepath.Join(root, "proc/stat")); err == nil {
		dst = subdoc(dst, "cpu", func(d []byte) []byte { return appendProcStat(d, b) })
	}
	if b, err := os.ReadFile(filepath.Join(root, "proc/meminfo")); err == nil {
		dst = subdoc(dst, "memory", func(d []byte) []byte { return appendMeminfo(d, b) })
	}
	if b, err := os.ReadFile(filepath.Join(root, "proc/diskstats")); err == nil {
		dst = subdoc(dst, "disks", func(d []byte) []byte { return appendDiskstats(d, b, root) })
	}
	return dst
}

func appendProcStat(d, b []byte) []byte {
	var cpu []string
	cpus := 0
	rest := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch {
		case f[0] == "cpu":
			cpu = f[1:]
		case strings.HasPrefix(f[0], "cpu"):
			cpus++
		case f[0] == "ctxt" || f[0] == "btime" || f[0] == "processes" || f[0] == "procs_running" || f[0] == "procs_blocked":
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				rest[f[0]] = n
			}
		}
	}
	d = bsoncore.AppendInt64Element(d, "num_cpus", int64(cpus))
	for i, name := range procCPUFields {
		if i < len(cpu) {
			if n, err := strconv.ParseInt(cpu[i], 10, 64); err == nil {
				d = bsoncore.AppendInt64Element(d, name, n*1000/clockTicks)
			}
		}
	}
	for _, name := range []string{"ctxt", "btime", "processes", "procs_running", "procs_blocked"} {
		if n, ok := rest[name]; ok {
			d = bsoncore.AppendInt64Element(d, name, n)
		}
	}
	return d
}

func appendMeminfo(d, b []byte) []byte {
	vals := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		f := strings.Fields(rest)
		if !ok || len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			vals[name] = n
		}
	}
	for _, name := range procMemFields {
		if n, ok := vals[name]; ok {
			d = bsoncore.AppendInt64Element(d, name+"_kb", n)
		}
	}
	return d
}

func appendDiskstats(d, b []byte, root string) []byte {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3+len(procDiskFields) {
			continue
		}
		name := f[2]
		// Whole disks only (partitions have no /sys/block entry), and not
		// loop or ram devices.
		if strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "sys/block", name)); err != nil {
			continue
		}
		var vals [11]int64
		for i := range procDiskFields {
			vals[i], _ = strconv.ParseInt(f[3+i], 10, 64)
		}
		if vals[0]+vals[4] == 0 {
			continue
		}
		d = subdoc(d, name, func(d []byte) []byte {
			for i, k := range procDiskFields {
				d = bsoncore.AppendInt64Element(d, k, vals[i])
			}
			return d
		})
	}
	return d
}
