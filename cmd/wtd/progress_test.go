package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlainProgress: without a terminal, a task prints a line at its start,
// at most one every 5 s, and one at its end; a task bounded by a duration
// shows the operations so far and the time of its duration, never "n/0".
func TestPlainProgress(t *testing.T) {
	var out bytes.Buffer
	pr := newProgress(Env{Stdout: &out})
	const dur = 1200 * time.Millisecond
	start := time.Now()
	for i := int64(1); time.Since(start) < dur+100*time.Millisecond; i++ {
		pr.update("reads: workload t.c", i*10, 0, dur)
		time.Sleep(5 * time.Millisecond)
	}
	for i := int64(0); i <= 1000; i += 10 {
		pr.update("load t.c", i, 1000, 0)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var timed, counted []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "workload t.c"):
			timed = append(timed, l)
		case strings.Contains(l, "load t.c"):
			counted = append(counted, l)
		}
	}
	if len(timed) != 2 || len(counted) != 2 {
		t.Fatalf("want a start and an end line per task, got:\n%s", out.String())
	}
	if !strings.Contains(timed[0], "ops, 0s of 1.2s (0%)") || !strings.Contains(timed[1], "ops, 1.2s of 1.2s (100%)") {
		t.Errorf("duration task lines:\n%s", strings.Join(timed, "\n"))
	}
	for _, l := range timed {
		if strings.Contains(l, "/0 ") {
			t.Errorf("a count of 0 shown as a total: %s", l)
		}
	}
	if !strings.Contains(counted[0], "load t.c: 0/1000 (0%)") || !strings.Contains(counted[1], "load t.c: 1000/1000 (100%)") {
		t.Errorf("count task lines:\n%s", strings.Join(counted, "\n"))
	}
}
