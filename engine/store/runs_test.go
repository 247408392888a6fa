package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func exampleRunInfo(started time.Time) RunInfo {
	return RunInfo{
		PlaybookPath: "playbooks/cache_sweep.lua",
		Playbook:     "local p = params{ sizes = {0.25, 0.5} }\n",
		Params:       map[string]any{"sizes": []any{0.25, 0.5}, "docs": 600000.0, "name": "nightly"},
		StartedAt:    started,
		Host: HostFacts{Cores: 2, MemoryBytes: 8 << 30, Kernel: "6.1.0-18-amd64",
			Virtualisation: "kvm", Disk: "vda: virtio, not rotational"},
		TargetPath:    "/usr/local/bin/minimongod",
		TargetVersion: "minimongod 0.1 (WiredTiger 3.2.1)",
		WtdVersion:    "v0.3.0",
		Trigger:       "schedule nightly",
	}
}

func TestRunLifecycle(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	t0 := time.Unix(1700000000, 123456789)
	info := exampleRunInfo(t0)
	id, err := s.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(info.Playbook))
	want := Run{ID: id, RunInfo: info, Status: StatusRunning, PlaybookSHA256: hex.EncodeToString(sum[:])}
	want.OwnerPID, want.OwnerHost, want.OwnerStart, want.OwnerPIDNS = os.Getpid(), s.self.Host, s.self.Start, s.self.PIDNS
	got, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetRun after CreateRun (-want +got):\n%s", diff)
	}

	end := t0.Add(time.Minute)
	if err := s.FinishRun(ctx, id, StatusFailed, "step reads 0.25 GB: mongod exited", end); err != nil {
		t.Fatal(err)
	}
	want.Status, want.Reason, want.EndedAt = StatusFailed, "step reads 0.25 GB: mongod exited", end
	if got, err = s.GetRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetRun after FinishRun (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		call func() error
		want error  // errors.Is
		text string // in the message
	}{
		{"get unknown run", func() error { _, err := s.GetRun(ctx, 4242); return err }, ErrNotFound, "get run 4242"},
		{"finish unknown run", func() error { return s.FinishRun(ctx, 4242, StatusOK, "", end) }, ErrNotFound, "finish run 4242"},
		{"finish with bad status", func() error { return s.FinishRun(ctx, id, "done", "", end) }, nil, `status "done"`},
		{"steps of unknown run", func() error { _, err := s.Steps(ctx, 4242); return err }, ErrNotFound, "4242"},
		{"finish unknown step", func() error { return s.FinishStep(ctx, 4242, StepResult{Status: StatusOK}) }, ErrNotFound, "finish step 4242"},
		{"step of unknown run", func() error { _, err := s.CreateStep(ctx, StepInfo{RunID: 4242, Name: "x"}); return err }, nil, "create step of run 4242"},
		{"step with bad JSON", func() error {
			_, err := s.CreateStep(ctx, StepInfo{RunID: id, Name: "x", Settings: json.RawMessage("{nope")})
			return err
		}, nil, "check settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want errors.Is %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q, want it to contain %q", err, tt.text)
			}
		})
	}
}

func TestListRunsNewestFirst(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	var ids []int64
	for i := range 5 {
		id, err := s.CreateRun(ctx, RunInfo{PlaybookPath: "p.lua", StartedAt: time.Unix(int64(1000+i), 0)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tests := []struct {
		limit int
		want  []int64
	}{
		{0, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{2, []int64{ids[4], ids[3]}},
		{10, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	}
	for _, tt := range tests {
		runs, err := s.ListRuns(ctx, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ListRuns(%d) ids (-want +got):\n%s", tt.limit, diff)
		}
	}
}

func TestSteps(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	t0 := time.Unix(1700000000, 0)
	runID, err := s.CreateRun(ctx, exampleRunInfo(t0))
	if err != nil {
		t.Fatal(err)
	}
	settings := json.RawMessage(`{"cacheSizeGB":0.25,"engineConfig":"eviction_target=80"}`)
	prov := json.RawMessage(`{"verdict":"unknown"}`)
	finalProv := json.RawMessage(`{"verdict":"cold","reason":"dataset 6 GB > memory 2 GB"}`)
	results := json.RawMessage(`{"read":{"count":20000,"errors":0,"opsPerSec":5120.5,"p99us":880}}`)

	var want []Step
	for round := 1; round <= 3; round++ {
		info := StepInfo{RunID: runID, Name: "reads 0.25 GB", Labels: map[string]any{"round": float64(round), "cacheSizeGB": 0.25},
			StartedAt: t0.Add(time.Duration(round) * time.Minute), Settings: settings, Provenance: prov}
		id, err := s.CreateStep(ctx, info)
		if err != nil {
			t.Fatal(err)
		}
		st := Step{ID: id, RunID: runID, Seq: round, Name: info.Name, Labels: info.Labels, StartedAt: info.StartedAt,
			Status: StatusRunning, Settings: settings, Provenance: prov}
		if round < 3 {
			res := StepResult{Status: StatusOK, EndedAt: info.StartedAt.Add(30 * time.Second), Results: results}
			if round == 2 {
				res.Provenance = finalProv
				res.Status, res.Error = StatusFailed, "workload: 12 errors"
			}
			if err := s.FinishStep(ctx, id, res); err != nil {
				t.Fatal(err)
			}
			st.Status, st.Error, st.EndedAt, st.Results = res.Status, res.Error, res.EndedAt, results
			if res.Provenance != nil {
				st.Provenance = finalProv
			}
		}
		want = append(want, st)
	}
	got, err := s.Steps(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Steps (-want +got):\n%s", diff)
	}

	// Ending the run ends the step still running.
	end := t0.Add(time.Hour)
	if err := s.FinishRun(ctx, runID, StatusAborted, "interrupted (SIGTERM)", end); err != nil {
		t.Fatal(err)
	}
	want[2].Status, want[2].Error, want[2].EndedAt = StatusAborted, "interrupted (SIGTERM)", end
	if got, err = s.Steps(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Steps after FinishRun (-want +got):\n%s", diff)
	}
}

func TestEventsInTimeOrder(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	t0 := time.Unix(1700000000, 0)
	runID, err := s.CreateRun(ctx, exampleRunInfo(t0))
	if err != nil {
		t.Fatal(err)
	}
	s.AddEvent(runID, t0.Add(2*time.Second), "warn", "mongod:m1", "restart took 4.1 s", map[string]any{"port": 9900})
	s.AddEvent(runID, t0.Add(1*time.Second), "info", "engine", "step reads 0.25 GB", nil)
	s.AddEvent(runID, t0.Add(3*time.Second), "error", "engine", "mongod exited", map[string]any{"code": 14, "log": []string{"a", "b"}})
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{RunID: runID, TS: t0.Add(1 * time.Second), Level: "info", Source: "engine", Message: "step reads 0.25 GB"},
		{RunID: runID, TS: t0.Add(2 * time.Second), Level: "warn", Source: "mongod:m1", Message: "restart took 4.1 s",
			Attrs: map[string]any{"port": 9900.0}},
		{RunID: runID, TS: t0.Add(3 * time.Second), Level: "error", Source: "engine", Message: "mongod exited",
			Attrs: map[string]any{"code": 14.0, "log": []any{"a", "b"}}},
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ID" }, cmp.Ignore())); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
}

// deadPID returns the pid of a process that has ended and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run child: %v", err)
	}
	return cmd.Process.Pid
}

func TestPasswordsNeverReachTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wtd.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3tPa55"
	uri := "mongodb://admin:" + secret + "@127.0.0.1:9900/?authSource=admin"
	info := exampleRunInfo(time.Unix(1700000000, 0))
	info.Params = map[string]any{"uri": uri, "nested": map[string]any{"list": []any{uri}}, uri: "as a key"}
	info.Playbook = `local m = mongod.connect{ uri = "` + uri + `" }`
	info.TargetURI = uri
	id, err := s.CreateRun(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	stepID, err := s.CreateStep(ctx, StepInfo{RunID: id, Name: "connect " + uri,
		Labels: map[string]any{"target": uri}, Settings: json.RawMessage(`{"uri":"` + uri + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishStep(ctx, stepID, StepResult{Status: StatusFailed, Error: "dial " + uri + ": refused",
		Results: json.RawMessage(`{"uri": "` + uri + `", "n": 12345678901234567890}`)}); err != nil {
		t.Fatal(err)
	}
	s.AddEvent(id, time.Unix(1700000001, 0), "error", "engine", "connect "+uri+" failed", map[string]any{"uri": uri})
	if err := s.FinishRun(ctx, id, StatusFailed, "connect "+uri, time.Unix(1700000002, 0)); err != nil {
		t.Fatal(err)
	}

	run, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	masked := RedactURI(uri)
	if run.Params["uri"] != masked || run.TargetURI != masked {
		t.Errorf("params uri %v, target uri %q, want %q", run.Params["uri"], run.TargetURI, masked)
	}
	steps, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":12345678901234567890,"uri":"` + masked + `"}`; string(steps[0].Results) != want {
		t.Errorf("results %s, want %s (numbers kept exactly)", steps[0].Results, want)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the password", filepath.Base(name))
		}
		if name == path && !bytes.Contains(b, []byte(masked)) {
			t.Errorf("%s lacks the masked URI %q: the test looks in the wrong place", filepath.Base(name), masked)
		}
	}
}

func TestSetRunParams(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, "", Options{})
	id, err := s.CreateRun(ctx, exampleRunInfo(time.Unix(1700000000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{"sizes": []any{1.0, 2.0}, "uri": "mongodb://u:pw@h"}
	if err := s.SetRunParams(ctx, id, params); err != nil {
		t.Fatal(err)
	}
	run, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"sizes": []any{1.0, 2.0}, "uri": "mongodb://u:xxxxx@h"}
	if diff := cmp.Diff(want, run.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if err := s.SetRunParams(ctx, 4242, params); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetRunParams of an unknown run: %v, want ErrNotFound", err)
	}
}
