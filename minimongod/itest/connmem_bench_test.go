package itest

import (
	"testing"
	"time"
)

// BenchmarkIdleConnectionMemory is issue 14's memory target, run by hand
// (it takes over a minute):
//
//	go test ./minimongod/itest -run '^$' -bench IdleConnectionMemory -benchtime 1x
//
// 200 connections each declare a 48 MB message and send nothing; RSS must
// stay under 200 MB, and come back within 50 MB of the starting RSS a
// minute after they close. It reports the RSS figures in MB.
func BenchmarkIdleConnectionMemory(b *testing.B) {
	s := start(b, "--wiredTigerCacheSizeGB", "0.25")
	pid := s.cmd.Process.Pid
	base := rssBytes(b, pid)
	var loaded, after int64
	for i := 0; i < b.N; i++ {
		loaded = max(loaded, idleRound(b, s, 200, 2*time.Second))
	}
	time.Sleep(time.Minute)
	after = rssBytes(b, pid)
	b.ReportMetric(float64(base)/(1<<20), "MB-rss-start")
	b.ReportMetric(float64(loaded)/(1<<20), "MB-rss-200-conns")
	b.ReportMetric(float64(after)/(1<<20), "MB-rss-1min-after")
	if loaded > 200<<20 {
		b.Errorf("RSS with 200 connections declaring 48 MB: %d MB, want under 200", loaded>>20)
	}
	if after-base > 50<<20 {
		b.Errorf("RSS a minute after they closed: %d MB, start %d MB", after>>20, base>>20)
	}
}
