package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wtd/internal/testbin"
)

var idleFor = flag.Duration("idle", 20*time.Second, "how long BenchmarkDaemonIdle measures the idle daemon")

// BenchmarkDaemonIdle measures what an idle daemon costs: the wtd daemon
// binary with 20 schedules and 2 windows, none due, serving its API; its
// CPU time over -idle (all threads, from /proc schedstat, in ns) as a
// share of one core, and its resident memory. The goal is under 0.1 %.
//
//	go test ./cmd/wtd -run '^$' -bench DaemonIdle -benchtime 1x
func BenchmarkDaemonIdle(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "pb.lua"), []byte("log('x')\n"), 0o644)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "listen: 127.0.0.1:%d\ndb: wtd.db\nschedules:\n", testbin.FreePort(b))
	for i := range 20 {
		fmt.Fprintf(&cfg, "  - name: s%d\n    cron: \"%d 3 * * *\"\n    playbook: pb.lua\n    catch_up: 1h\n", i, i)
	}
	cfg.WriteString("windows:\n")
	for i := range 2 {
		fmt.Fprintf(&cfg, "  - name: w%d\n    cron: \"0 %d 1 1 *\"\n    duration: 1h\n    server: mongodb://127.0.0.1:1\n"+
			"    open: { setParameter: { ttlMonitorEnabled: true } }\n    close: { setParameter: { ttlMonitorEnabled: false } }\n", i, i+1)
	}
	path := filepath.Join(dir, "wtd.yaml")
	os.WriteFile(path, []byte(cfg.String()), 0o644)
	for range b.N {
		cmd, out := startWtd(b, b.TempDir(), "daemon", "--config", path)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(out.String(), `"msg":"daemon start"`) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // settle
		pid := cmd.Process.Pid
		cpu0, t0 := cpuNanos(b, pid), time.Now()
		time.Sleep(*idleFor)
		cpu1, t1 := cpuNanos(b, pid), time.Now()
		rss := rssKB(b, pid)
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		share := float64(cpu1-cpu0) / float64(t1.Sub(t0).Nanoseconds()) * 100
		b.ReportMetric(share, "cpu%")
		b.ReportMetric(float64(rss)/1024, "rss-MB")
		if share >= 0.1 {
			b.Errorf("idle daemon used %.3f%% of a core, goal < 0.1%%", share)
		}
	}
}

// cpuNanos is the CPU time of every thread of pid, from schedstat.
func cpuNanos(b *testing.B, pid int) int64 {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no schedstat for pid %d", pid)
	}
	var sum int64
	for _, p := range tasks {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended
		}
		f := strings.Fields(string(data))
		n, _ := strconv.ParseInt(f[0], 10, 64)
		sum += n
	}
	return sum
}

// rssKB is pid's resident set size.
func rssKB(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
