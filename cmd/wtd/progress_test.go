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

// TestProgressEndsWhenTheTaskEnds: the display's clock starts at the first
// report, later than the workload's; the end the run reports (total -1)
// ends the task whatever that clock says: the plain end line is printed,
// and on a terminal the bar completes (close would otherwise wait for it).
func TestProgressEndsWhenTheTaskEnds(t *testing.T) {
	var out bytes.Buffer
	pr := newProgress(Env{Stdout: &out})
	pr.update("workload t.c", 100, 0, time.Hour)
	pr.update("workload t.c", 250, -1, time.Hour)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "workload t.c: 250 ops") {
		t.Errorf("want a start and an end line with the final count:\n%s", out.String())
	}
	pr.update("workload t.c", 300, -1, time.Hour) // a second end says nothing
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Errorf("%d lines after a repeated end:\n%s", n, out.String())
	}

	var term syncBuffer
	tp := newProgress(Env{Stdout: &term, Terminal: true})
	done := make(chan struct{})
	go func() {
		for i := int64(1); i <= 200; i++ {
			tp.update("workload t.c", i, 0, time.Hour)
			time.Sleep(time.Millisecond)
		}
		tp.update("workload t.c", 200, -1, time.Hour)
		close(done)
	}()
	<-done
	closed := make(chan struct{})
	go func() { tp.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("close still waits for a bar 10 s after its task ended")
	}
}
