package report

import (
	"bufio"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/internal/testbin"
	"wtd/internal/testbrowser"
)

// freezePlaybook reads at an open-loop rate; the test freezes the server
// (SIGSTOP) for a second in the middle of the step.
const freezePlaybook = `
local m = mongod.start{ cacheSizeGB = 0.25 }
m:load{ ns = "t.c", docs = 3000, doc_bytes = 200 }
print("pid " .. m.pid)
step{ name = "reads", run = function()
  return m:workload{ ns = "t.c", duration = 7, rate = 300, threads = 8, mix = { read = 1 } }
end }
`

// TestHeatmapShowsAFreeze: a server frozen for a second during an
// open-loop workload shows in the run's latency heatmap as a band of
// latencies over 250 ms in the seconds after the freeze, where the seconds
// before have none; the cells count every operation of their seconds; and
// Chromium draws the heatmap with its cells.
func TestHeatmapShowsAFreeze(t *testing.T) {
	wtd, mm := testbin.Wtd(t), testbin.Minimongod(t)
	dir := t.TempDir()
	db, pb := filepath.Join(dir, "wtd.db"), filepath.Join(dir, "freeze.lua")
	if err := os.WriteFile(pb, []byte(freezePlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wtd, "run", "--db", db, "--mongod", mm, pb)
	cmd.Env = append(os.Environ(), "WTD_STATE_DIR="+filepath.Join(dir, "state"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "pid "); ok {
			pid, _ = strconv.Atoi(rest)
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the playbook printed no server pid")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	time.Sleep(3 * time.Second) // into the step
	frozeAt := time.Now()
	syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(time.Second)
	syscall.Kill(pid, syscall.SIGCONT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wtd run: %v", err)
	}

	ctx := context.Background()
	st, err := store.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	m, err := Load(ctx, st, 1)
	if err != nil {
		t.Fatal(err)
	}
	var heat *Chart
	for i := range m.Charts {
		if m.Charts[i].ID == "heat-1" {
			heat = &m.Charts[i]
		}
	}
	if heat == nil || len(heat.Runs) != 1 || len(heat.Heat) != len(heat.Runs[0].Series)+1 {
		t.Fatalf("no heatmap of run 1: %+v", heat)
	}
	rec := m.Records[0]
	var step record.StepRecord
	for _, s := range rec.Steps {
		if s.Name == "reads" {
			step = s
		}
	}
	freeze := frozeAt.Sub(rec.Run.StartedAt).Seconds()
	rd := heat.Runs[0]
	var total, wantTotal float64
	slowBefore, slowAfter := 0.0, 0.0
	for i, x := range rd.X {
		for k, s := range rd.Series {
			v := s.Y[i]
			if math.IsNaN(v) {
				continue
			}
			total += v
			if heat.Heat[k] >= 250 {
				switch {
				case x < freeze-0.5:
					slowBefore += v
				case x < freeze+2.5:
					slowAfter += v
				}
			}
		}
	}
	points := record.SecondPoints(step)
	for _, p := range points[:len(points)-1] {
		for _, n := range p.Counts {
			wantTotal += float64(n)
		}
	}
	if total != wantTotal || total == 0 {
		t.Errorf("the heatmap counts %v operations, the step's seconds %v", total, wantTotal)
	}
	// At 300 operations a second, the freeze holds about 300 of them for up
	// to a second.
	if slowAfter < 50 || slowBefore > 0 {
		t.Errorf("operations over 250 ms: %v before the freeze at %.1f s, %v in the 3 s from it; want none, then a band", slowBefore, freeze, slowAfter)
	}
	drawnInBrowser(t, testbrowser.Allocator(t, testbrowser.Chromium(t)), m, "report-heatmap")
}
