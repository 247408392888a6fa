package hostctl

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCPUPercent(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur cpuTimes
		want      map[string]float64
	}{
		{
			name: "since boot",
			cur:  cpuTimes{User: 20, System: 10, Idle: 60, Iowait: 5, Steal: 5},
			want: map[string]float64{"cpu.user": 20, "cpu.system": 10, "cpu.idle": 60, "cpu.iowait": 5, "cpu.steal": 5},
		},
		{
			name: "delta",
			prev: cpuTimes{User: 100, Idle: 100},
			cur:  cpuTimes{User: 150, Idle: 250, SoftIRQ: 0, IRQ: 0},
			want: map[string]float64{"cpu.user": 25, "cpu.idle": 75},
		},
		{
			name: "no time passed",
			prev: cpuTimes{User: 5, Idle: 5},
			cur:  cpuTimes{User: 5, Idle: 5},
			want: map[string]float64{},
		},
		{
			name: "counter went backwards counts as zero",
			prev: cpuTimes{User: 500, Idle: 100},
			cur:  cpuTimes{User: 10, Idle: 200},
			want: map[string]float64{"cpu.idle": 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cpuPercent(tt.prev, tt.cur)
			full := map[string]float64{"cpu.user": 0, "cpu.nice": 0, "cpu.system": 0, "cpu.idle": 0,
				"cpu.iowait": 0, "cpu.irq": 0, "cpu.softirq": 0, "cpu.steal": 0}
			for k, v := range tt.want {
				full[k] = v
			}
			if d := cmp.Diff(full, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDiskRates(t *testing.T) {
	prev := map[string]diskStat{
		"sda":  {Reads: 100, ReadBytes: 1 << 20, Writes: 10, WriteBytes: 4096, IOTimeMs: 1000},
		"gone": {Reads: 1},
	}
	tests := []struct {
		name string
		cur  map[string]diskStat
		dt   time.Duration
		want map[string]float64
	}{
		{
			name: "two seconds",
			cur: map[string]diskStat{
				"sda": {Reads: 300, ReadBytes: 3 << 20, Writes: 30, WriteBytes: 4096 * 3, IOTimeMs: 2000},
				"new": {Reads: 5},
			},
			dt: 2 * time.Second,
			want: map[string]float64{
				"disk.sda.reads": 100, "disk.sda.read_bytes": 1 << 20, "disk.sda.writes": 10,
				"disk.sda.write_bytes": 4096, "disk.sda.util_pct": 50,
			},
		},
		{
			name: "util is capped at 100",
			cur:  map[string]diskStat{"sda": {Reads: 100, ReadBytes: 1 << 20, Writes: 10, WriteBytes: 4096, IOTimeMs: 5000}},
			dt:   time.Second,
			want: map[string]float64{
				"disk.sda.reads": 0, "disk.sda.read_bytes": 0, "disk.sda.writes": 0,
				"disk.sda.write_bytes": 0, "disk.sda.util_pct": 100,
			},
		},
		{name: "first sample", cur: prev, dt: 0, want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, diskRates(prev, tt.cur, tt.dt)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestProcRates(t *testing.T) {
	prev := procStat{UTime: 100, STime: 50, ReadBytes: 1000, WriteBytes: 0, HasIO: true}
	tests := []struct {
		name string
		cur  procStat
		dt   time.Duration
		want map[string]float64
	}{
		{
			name: "one and a half CPUs",
			cur:  procStat{UTime: 250, STime: 50, ReadBytes: 5000, WriteBytes: 8000, HasIO: true},
			dt:   time.Second,
			want: map[string]float64{"proc.mongod.cpu_pct": 150, "proc.mongod.read_bytes": 4000, "proc.mongod.write_bytes": 8000},
		},
		{
			name: "no io file",
			cur:  procStat{UTime: 110, STime: 60},
			dt:   2 * time.Second,
			want: map[string]float64{"proc.mongod.cpu_pct": 10},
		},
		{name: "no time", cur: prev, dt: 0, want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, procRates("mongod", prev, tt.cur, tt.dt, 100)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
