// Package playbooks holds wtd's Lua experiments; this test runs each one,
// shrunk with parameters, against the built-in target.
package playbooks

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"wtd/engine"
	"wtd/engine/record"
	"wtd/engine/store"
	"wtd/engine/workload"
	"wtd/internal/testbin"
	"wtd/internal/testhost"
	"wtd/internal/testsvc"
	"wtd/luabind"
)

// small are the parameters that make each playbook quick.
var small = map[string]map[string]string{
	// 60 MB of data: twice a 30 MB cache, a quarter of a 256 MB one.
	"cache_sweep.lua": {"sizes": "0.03,0.25", "docs": "60000", "reads": "6000", "rounds": "2", "working_set": "5"},
	// 100 MB of writes: past a 256 MB cache's dirty trigger (20%), well
	// inside a 2 GB one's.
	"write_pressure.lua": {"docs": "100000", "threads": "4", "batch": "500"},
	"eviction_sweep.lua": {"docs": "3000", "ops": "500", "threads": "2"},
	// The service (testsvc) starts with 0.5 GB; the playbook halves it.
	"field_tuning.lua": {"cache_gb": "0.25", "docs": "3000", "doc_bytes": "1000", "duration": "0", "ops": "600", "threads": "2"},
	// 20,000 documents: scans of several milliseconds, long enough for 16
	// threads to want more than 5 tickets at once.
	"tickets.lua": {"docs": "20000", "duration": "2", "threads": "16"},
	"ycsb.lua":    {"docs": "3000", "doc_bytes": "500", "threads": "4", "duration": "1", "warmup": "0.3"},
	"knee.lua":    {"docs": "3000", "doc_bytes": "500", "threads": "1,2,4", "duration": "1", "warmup": "0.2"},
	// A peak of 6 s: the documents expire over its last 5 s, and the TTL
	// monitor (a pass a second) has time to delete most of them in it.
	// Three trials of 1 s at 300 ops/s on 1.5 MB, one confirmation round.
	// No p99 guard: after the warm-up the baseline's p99 is under a
	// millisecond, and on a shared host one second of a trial can pass 50
	// times that (the guard has tests of its own in luabind).
	"autotune.lua": {"docs": "3000", "doc_bytes": "500", "rate": "300", "threads": "2", "duration": "1", "warmup": "0.3", "warm_up": "0.5",
		"trials": "3", "initial": "2", "confirm": "1", "p99_guard": "0"},
	"ttl_offpeak.lua": {"docs": "2000", "expiring": "3000", "doc_bytes": "500", "peak": "6", "night": "10", "threads": "2", "cache_gb": "0.25"},
}

// checks are what a playbook's shrunk run must show besides ok steps.
var checks = map[string]func(t *testing.T, out string){
	"ttl_offpeak.lua": checkTTLOffpeak,
	"autotune.lua":    checkAutotune,
}

// checkAutotune: the baseline and the three trials are listed with their
// p99, and a verdict in one of its two forms closes the search.
func checkAutotune(t *testing.T, out string) {
	for _, want := range []string{"\nbaseline       ok", "\ntrial 1        ok", "\ntrial 3        ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("autotune.lua output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "verdict: best setting ") && !strings.Contains(out, "verdict: no setting beat the baseline beyond noise") {
		t.Errorf("autotune.lua printed no verdict:\n%s", out)
	}
}

func TestPlaybooksRun(t *testing.T) {
	files, err := filepath.Glob("*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no playbooks: %v", err)
	}
	bin := testbin.Minimongod(t)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			params, ok := small[f]
			if !ok {
				t.Fatalf("%s has no small parameters in this test: add them", f)
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(src), "-- "+f+":") {
				t.Errorf("%s does not start with its header comment", f)
			}
			ctx := context.Background()
			st, err := store.Open(ctx, filepath.Join(t.TempDir(), "wtd.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close(ctx)
			var out strings.Builder
			cfg := engine.Config{Store: st, Host: testhost.New(t), MongodBinary: bin, Dir: t.TempDir()}
			var svc *testsvc.Service
			if f == "field_tuning.lua" { // a service behind the test service manager
				svc = testsvc.Start(t, bin)
				params = maps.Clone(params)
				params["unit"], params["config"], params["uri"] = testsvc.Unit, svc.Config, svc.URI
				params["service_manager"] = strings.Join(svc.Manager, ",")
				cfg.AllowServices = []string{testsvc.Unit}
			}
			r, err := engine.StartRun(ctx, cfg,
				engine.RunInfo{PlaybookPath: f, Playbook: string(src)})
			if err != nil {
				t.Fatal(err)
			}
			_, perr := luabind.RunPlaybook(ctx, f, string(src), luabind.Env{Run: r, Overrides: params, Out: &out})
			status := record.StatusOK
			if perr != nil {
				status = record.StatusFailed
			}
			if err := r.Finish(ctx, status, ""); err != nil {
				t.Error(err)
			}
			if perr != nil {
				t.Fatalf("%s: %v\n%s", f, perr, out.String())
			}
			if svc != nil {
				if got := svc.ConfigNow(t); got != string(svc.Original) {
					t.Errorf("%s: the service's config after the run is not the original:\n%s", f, got)
				}
				if got := svc.CacheBytes(t); got != testsvc.GB(0.5) {
					t.Errorf("%s: cache after the run = %.0f, want the original %.0f", f, got, testsvc.GB(0.5))
				}
			}
			steps := r.Steps()
			if len(steps) < 2 {
				t.Fatalf("%s recorded %d steps", f, len(steps))
			}
			for _, s := range steps {
				if s.Status != record.StatusOK || s.Server == nil || s.Settings == nil {
					t.Errorf("step %s: status %s, server deltas %v, settings %v", s.Name, s.Status, s.Server != nil, s.Settings != nil)
				}
			}
			if !strings.Contains(out.String(), steps[len(steps)-1].Name) {
				t.Errorf("%s printed no report table:\n%s", f, out.String())
			}
			pointChecked := false
			if check, ok := points[f]; ok {
				check(t, steps)
				pointChecked = true
			}
			if check := checks[f]; check != nil {
				check(t, out.String())
				pointChecked = true
			}
			if !pointChecked {
				t.Errorf("%s: no check of its experiment's point in this test: add one", f)
			}
		})
	}
}

// points check, per playbook, the one result that shows its experiment's
// point, on the shrunk run.
var points = map[string]func(t *testing.T, steps []record.StepRecord){
	// A working set twice the cache misses it on many reads; one that fits
	// (after a round to warm it) hardly ever.
	"cache_sweep.lua": func(t *testing.T, steps []record.StepRecord) {
		small, big := lastRound(t, steps, "reads all", 0.03), lastRound(t, steps, "reads all", 0.25)
		perOp := func(st record.StepRecord) float64 {
			if v := record.MeasuresOf(st).PagesReadPerOp; v != nil {
				return *v
			}
			t.Fatalf("step %d %s: no pages read/op", st.Seq, st.Name)
			return 0
		}
		ps, pb := perOp(small), perOp(big)
		t.Logf("pages read per read, whole data set, last round: %.3f at 30 MB, %.3f at 256 MB", ps, pb)
		if !(ps > 0.2 && ps > 3*pb) {
			t.Errorf("pages read per read over the whole data set: %.3f with a 30 MB cache, %.3f with 256 MB; want the small cache well above", ps, pb)
		}
	},
	// The dirty trigger (20% of the cache) bounds the dirty peak of the
	// small cache, not of the large one.
	"write_pressure.lua": func(t *testing.T, steps []record.StepRecord) {
		peak := map[any]float64{}
		for _, s := range steps {
			if s.Server != nil && s.Server.DirtyPeak != nil {
				peak[s.Labels["cacheSizeGB"]] = *s.Server.DirtyPeak
			}
		}
		small, big := peak[0.25], peak[2.0]
		t.Logf("dirty peak: %.1f MB at 0.25 GB, %.1f MB at 2 GB", small/1e6, big/1e6)
		if !(small > 0 && big > small && small < 0.25*(1<<30)*0.3) {
			t.Errorf("dirty peak %.1f MB with 0.25 GB, %.1f MB with 2 GB; want the small cache's lower and bounded by its trigger", small/1e6, big/1e6)
		}
	},
	// Application-thread eviction time is what the eviction settings are
	// about: every measured step records it.
	"eviction_sweep.lua": func(t *testing.T, steps []record.StepRecord) {
		n := 0
		for _, s := range steps[1:] {
			if s.Server == nil || s.Server.AppEvictMicros == nil || s.Server.AppThreadEvicted == nil {
				t.Errorf("step %s (%v) records no application-thread eviction", s.Name, s.Labels)
			}
			n++
		}
		if n < 3 {
			t.Errorf("%d settings measured", n)
		}
	},
	// The cache step ran with the smaller cache in force (the service was
	// restarted with its config changed), each later one kept it, and every
	// measured step records application-thread eviction.
	"field_tuning.lua": func(t *testing.T, steps []record.StepRecord) {
		seen := map[string]int64{}
		for _, s := range steps {
			label, ok := s.Labels["setting"].(string)
			if !ok {
				continue
			}
			seen[label] = s.Settings.CacheMaxBytes
			if s.Server == nil || s.Server.AppEvictMicros == nil {
				t.Errorf("step %q records no application-thread eviction", label)
			}
		}
		t.Logf("cache in force per setting: %v", seen)
		if len(seen) != 6 {
			t.Errorf("%d settings measured, want 6: %v", len(seen), seen)
		}
		if seen["as configured"] != int64(testsvc.GB(0.5)) || seen["cacheSizeGB 0.25"] != int64(testsvc.GB(0.25)) ||
			seen["+ checkpoint 25 s"] != int64(testsvc.GB(0.25)) {
			t.Errorf("cache in force: %v, want 0.5 GB as configured and 0.25 GB from the change on", seen)
		}
	},
	// Each measured step ran with the read-ticket limit its label names;
	// with 5 tickets the slow reads queue, with 128 none does.
	"tickets.lua": func(t *testing.T, steps []record.StepRecord) {
		const q = "queues.execution.read.normalPriority."
		seen := 0
		for _, s := range steps {
			n, ok := s.Labels["tickets"]
			if !ok {
				continue
			}
			seen++
			if got := s.Settings.Parameters["executionControlConcurrentReadTransactions"]; got != n {
				t.Errorf("step with tickets=%v ran with executionControlConcurrentReadTransactions=%v", n, got)
			}
			wr := s.Result.(workload.Result)
			added, waited := wr.Watch[q+"addedToQueue"], wr.Watch[q+"totalTimeQueuedMicros"]
			queued, longest := added.End-added.Start, wr.Watch[q+"queueLength"].Max
			t.Logf("%v tickets: %d reads, queueLength max %.0f, %.0f queued, %.0f µs queued in all", n, wr.Total.Count, longest, queued, waited.End-waited.Start)
			switch n {
			case 5.0:
				if queued < 1 || waited.End <= waited.Start {
					t.Errorf("5 tickets: %.0f reads queued, %.0f µs queued: want a queue", queued, waited.End-waited.Start)
				}
				// queueLength is a gauge read every 0.1 s: a queue of two
				// on average over the step cannot read 0 at every look; a
				// queue that forms only now and then can.
				dur, _ := strconv.ParseFloat(small["tickets.lua"]["duration"], 64)
				mean := (waited.End - waited.Start) / 1e6 / dur
				if mean >= 2 && longest < 1 {
					t.Errorf("5 tickets: %.1f reads queued on average, yet queueLength max %.0f", mean, longest)
				}
			case 128.0:
				if longest != 0 || queued != 0 {
					t.Errorf("128 tickets: queueLength max %.0f, %.0f reads queued: want none", longest, queued)
				}
			}
		}
		if seen != 2 {
			t.Errorf("%d ticket settings measured, want 2", seen)
		}
	},
	// Each YCSB workload ran its operations in its proportions, after a
	// warm-up the step records.
	"ycsb.lua": func(t *testing.T, steps []record.StepRecord) {
		byName := map[string]record.StepRecord{}
		for _, s := range steps {
			byName[s.Name] = s
		}
		for _, p := range workload.Presets {
			s, ok := byName[p.Name]
			if !ok {
				t.Errorf("no step %s", p.Name)
				continue
			}
			wr := s.Result.(workload.Result)
			m := p.Mix
			weights := map[string]float64{workload.OpRead: m.Read, workload.OpUpdate: m.Update, workload.OpInsert: m.Insert,
				workload.OpScan: m.Scan, workload.OpRMW: m.RMW, workload.OpQuery: m.Query}
			n := float64(wr.Total.Count)
			for op, w := range weights {
				got := float64(wr.Ops[op].Count) / n
				if math.Abs(got-w) > 5*math.Sqrt(w*(1-w)/n)+1e-9 || wr.Ops[op].Errors != 0 {
					t.Errorf("%s: %s is %.3f of %0.f operations (%d errors), want %.2f", p.Name, op, got, n, wr.Ops[op].Errors, w)
				}
			}
			if wr.Distribution != p.Distribution || wr.Warmup == nil || !strings.Contains(s.Provenance.Warmup, "left out of the summary") {
				t.Errorf("%s: distribution %s, warm-up %+v, provenance %q", p.Name, wr.Distribution, wr.Warmup, s.Provenance.Warmup)
			}
		}
		if e := byName["ycsb-e"].Result.(workload.Result).Ops[workload.OpScan]; e.Docs <= e.Count {
			t.Errorf("ycsb-e: %d scans returned %d documents", e.Count, e.Docs)
		}
	},
	// The knee the playbook reports is the rule applied to the steps it
	// recorded, one per thread count.
	"knee.lua": func(t *testing.T, steps []record.StepRecord) {
		var points []workload.SweepPoint
		var knee map[string]any
		for _, s := range steps {
			switch s.Name {
			case "threads":
				wr := s.Result.(workload.Result)
				points = append(points, workload.SweepPoint{Threads: s.Labels["threads"].(int), OpsPerSec: wr.Total.OpsPerSec,
					P50Micros: wr.Total.P50Micros, P99Micros: wr.Total.P99Micros})
			case "knee":
				knee, _ = s.Result.(map[string]any)
			}
		}
		if len(points) != 3 || knee == nil {
			t.Fatalf("%d thread counts measured, knee %v", len(points), knee)
		}
		want, ok, reason, err := workload.Knee(points)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("points %+v: %s", points, reason)
		got, found := knee["knee"].(float64)
		if found != ok || (ok && int(got) != want) || knee["reason"] != reason {
			t.Errorf("recorded knee %v (%v), reason %q; the rule gives %d (%v), %q", knee["knee"], found, knee["reason"], want, ok, reason)
		}
	},
}

// lastRound returns the step named name with the largest round at the cache
// size gb.
func lastRound(t *testing.T, steps []record.StepRecord, name string, gb float64) record.StepRecord {
	t.Helper()
	var found *record.StepRecord
	for i, s := range steps {
		if s.Name == name && s.Labels["cacheSizeGB"] == gb && s.Server != nil {
			if found == nil || s.Labels["round"].(float64) > found.Labels["round"].(float64) {
				found = &steps[i]
			}
		}
	}
	if found == nil {
		t.Fatalf("no step %q at %v GB", name, gb)
	}
	return *found
}
