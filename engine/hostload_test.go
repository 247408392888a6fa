package engine

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
	"wtd/engine/record"
)

// A step's host load is the mean over its host samples; other processes'
// CPU is what the watched processes (wtd, the servers) did not use, and
// their I/O likewise; a figure no sample had stays nil.
func TestHostLoadFromSamples(t *testing.T) {
	var tr hostLoadTracker
	if tr.load() != nil {
		t.Fatal("a step without host samples has a host load")
	}
	for _, idle := range []float64{20, 40} {
		tr.observe(map[string]float64{"cpu.count": 2, "load.1": 5, "cpu.idle": idle, "cpu.iowait": 10, "cpu.steal": 0,
			"proc.wtd.cpu_pct": 30, "proc.m1.cpu_pct": 30, // 60% of one CPU: 30% of the host
			"disk.sda.read_bytes": 30e6, "disk.sda.write_bytes": 10e6, "proc.m1.write_bytes": 10e6})
	}
	h := tr.load()
	want := map[string]float64{"cores": 2, "load1": 5, "busy": 60, "others": 30, "steal": 0, "io": 30e6}
	got := map[string]*float64{"cores": h.Cores, "load1": h.Load1, "busy": h.BusyPct, "others": h.OthersCPUPct, "steal": h.StealPct, "io": h.OthersIOBytesPerSec}
	for k, w := range want {
		if got[k] == nil || *got[k] != w {
			t.Errorf("%s = %v, want %g", k, got[k], w)
		}
	}
	if h.Samples != 2 {
		t.Errorf("%d samples", h.Samples)
	}
	if busy := h.Busy(); busy != "load 5.0 on 2 cores, 30% CPU by other processes, 30 MB/s of other processes' disk I/O" {
		t.Errorf("Busy() = %q", busy)
	}
	var quiet hostLoadTracker
	quiet.observe(map[string]float64{"cpu.count": 2, "cpu.idle": 90, "proc.wtd.cpu_pct": 15})
	q := quiet.load()
	if q.Busy() != "" || q.Load1 != nil || q.StealPct != nil || q.OthersIOBytesPerSec != nil {
		t.Errorf("quiet host: %q, load %v, steal %v, io %v; want not busy and nil where not sampled", q.Busy(), q.Load1, q.StealPct, q.OthersIOBytesPerSec)
	}
	var stolen hostLoadTracker
	stolen.observe(map[string]float64{"cpu.count": 4, "cpu.idle": 50, "cpu.steal": 15, "proc.m1.cpu_pct": 200})
	if b := stolen.load().Busy(); !strings.Contains(b, "15% CPU stolen by the hypervisor") {
		t.Errorf("stolen: %q", b)
	}
}

// A step records how busy the host was: with a process spinning on one of
// the host's CPUs beside it, other processes used at least a third of one
// CPU's share, and the record read back from the store says so.
func TestStepRecordsItsHostLoad(t *testing.T) {
	r, st, _ := newTestRun(t, 200*time.Millisecond)
	hog := exec.Command("sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { hog.Process.Kill(); hog.Wait() }()
	rec, err := r.Step(context.Background(), StepSpec{Name: "idle"}, func(ctx context.Context) (any, error) {
		time.Sleep(2 * time.Second)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := rec.Host
	if h == nil || h.Samples < 3 || h.Cores == nil || h.OthersCPUPct == nil || h.BusyPct == nil {
		t.Fatalf("host load %+v: want several samples with cores, busy and others' CPU", h)
	}
	if share := 100 / *h.Cores / 3; *h.OthersCPUPct < share {
		t.Errorf("others' CPU %.0f%% with a spinning process on %.0f cores, want at least %.0f%%", *h.OthersCPUPct, *h.Cores, share)
	}
	steps, err := st.Steps(context.Background(), r.ID)
	if err != nil || len(steps) != 1 {
		t.Fatalf("steps %v %v", steps, err)
	}
	if back := record.StepFromStore(steps[0]).Host; back == nil || back.Samples != h.Samples || *back.OthersCPUPct != *h.OthersCPUPct {
		t.Errorf("host load read back %+v, recorded %+v", back, h)
	}
}
