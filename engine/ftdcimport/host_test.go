package ftdcimport

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wtd/engine/store"
	"wtd/internal/ftdc"
)

// More real files (internal/ftdc/testdata/SOURCES.md).
const (
	file3210 = testdata + "3.2.10/Antystenes+tas2016--metrics.2016-11-21T11-33-59Z-00000"
	file408  = testdata + "4.0.8/RicardoIngles+SIT323-task-9_1p--metrics.2023-05-15T11-19-08Z-00000"
	file8015 = testdata + "8.0.15/PHieu160105+mongodb_replica--metrics.interim"
)

// rawSamples reads every sample of a file's systemMetrics as the file has
// them: name (without "systemMetrics.") -> values, sample by sample across
// chunks, NaN where a chunk lacks the name.
func rawSamples(t *testing.T, path string) (map[string][]float64, int) {
	t.Helper()
	r, err := ftdc.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][]float64{}
	total := 0
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c, ok := it.(*ftdc.Chunk)
		if !ok || c.Samples == 0 {
			continue
		}
		seen := map[string]bool{}
		for i, n := range c.Names {
			k, ok := strings.CutPrefix(n, "systemMetrics.")
			if !ok {
				continue
			}
			seen[k] = true
			col := out[k]
			for len(col) < total {
				col = append(col, math.NaN())
			}
			for _, v := range c.Metric(i) {
				col = append(col, float64(v))
			}
			out[k] = col
		}
		total += c.Samples
		for k := range out {
			for !seen[k] && len(out[k]) < total {
				out[k] = append(out[k], math.NaN())
			}
		}
	}
	return out, total
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// TestHostMetricsAreTheRawOnes imports real files with systemMetrics and
// checks each host metric, sample by sample, against the file's own
// figures: memory from kB to bytes, CPU shares from the ms counters, disk
// rates from sectors (512 bytes) and the collector's own times. It checks
// the units against the file too: MemTotal against hostInfo's memSizeMB,
// and the CPU counters' growth against the number of CPUs (ms, not ticks).
func TestHostMetricsAreTheRawOnes(t *testing.T) {
	for _, tc := range []struct {
		path      string
		disks     int
		available bool // MemAvailable is in /proc/meminfo from Linux 3.14; 4.0 did not keep it
	}{
		{file408, 3, false},
		{file80, 2, true},
		{file8015, 6, true},
	} {
		backwards := 0
		t.Run(filepath.Base(filepath.Dir(tc.path)), func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			rep, err := Import(ctx, st, []string{tc.path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(rep.Runs))
			}
			run := rep.Runs[0].Run
			raw, n := rawSamples(t, tc.path)
			names, err := st.MetricNames(ctx, run, HostSource)
			if err != nil {
				t.Fatal(err)
			}
			var disks []string
			for _, name := range names {
				if d, ok := strings.CutSuffix(strings.TrimPrefix(name, "disk."), ".read_bytes"); ok {
					disks = append(disks, d)
				}
			}
			if len(disks) != tc.disks {
				t.Errorf("disks %v, want %d", disks, tc.disks)
			}
			if has := slices.Contains(names, "mem.available"); has != tc.available || slices.Contains(names, "mem.used") != tc.available {
				t.Errorf("host metrics %v: mem.available and mem.used there: %v, want %v (never 0 for a figure the file lacks)", names, has, tc.available)
			}
			cols, err := st.SeriesSet(ctx, run, HostSource, names)
			if err != nil {
				t.Fatal(err)
			}
			if len(cols.TS) != n {
				t.Fatalf("%d host samples, the file has %d", len(cols.TS), n)
			}
			got := map[string][]float64{}
			for i, name := range cols.Names {
				got[name] = cols.Values[i]
			}

			// What each host metric is, from the raw figures.
			want := map[string][]float64{}
			for _, f := range memFields {
				if k := f.ftdc + "_kb"; raw["memory."+k] != nil {
					want[f.host] = scaled(raw["memory."+k], 1024)
				}
			}
			if tc.available {
				want["mem.used"] = diff(raw["memory.MemTotal_kb"], raw["memory.MemAvailable_kb"], 1024)
			}
			want["mem.swap_used"] = diff(raw["memory.SwapTotal_kb"], raw["memory.SwapFree_kb"], 1024)
			if c := raw["cpu.num_cpus"]; c != nil {
				want["cpu.count"] = c
			} else {
				want["cpu.count"] = raw["cpu.num_logical_cores"]
			}
			at := raw["start"]
			// A counter that goes back counts as no time, as wtd's own
			// collector counts it: /proc/stat's iowait does go back (the
			// 4.0.8 file has it twice).
			step := func(c []float64, i int) float64 {
				if c[i] < c[i-1] {
					backwards++
					return 0
				}
				return c[i] - c[i-1]
			}
			cpuTotal := make([]float64, n)
			for _, s := range cpuStates {
				c := raw["cpu."+s+"_ms"]
				for i := 1; i < n; i++ {
					cpuTotal[i] += step(c, i)
				}
			}
			for _, s := range cpuStates {
				c := raw["cpu."+s+"_ms"]
				w := make([]float64, n)
				w[0] = math.NaN()
				for i := 1; i < n; i++ {
					w[i] = 100 * step(c, i) / cpuTotal[i]
				}
				want["cpu."+s] = w
			}
			for _, d := range disks {
				pre := "disks." + d + "."
				rate := func(name string, scale float64) []float64 {
					c, w := raw[pre+name], make([]float64, n)
					w[0] = math.NaN()
					for i := 1; i < n; i++ {
						w[i] = step(c, i) * scale / ((at[i] - at[i-1]) / 1000)
					}
					return w
				}
				want["disk."+d+".read_bytes"] = rate("read_sectors", 512)
				want["disk."+d+".write_bytes"] = rate("write_sectors", 512)
				want["disk."+d+".reads"] = rate("reads", 1)
				want["disk."+d+".writes"] = rate("writes", 1)
				util := rate("io_time_ms", 0.1) // ms per s -> percent
				for i := range util {
					util[i] = math.Min(util[i], 100)
				}
				want["disk."+d+".util_pct"] = util
			}
			for name, w := range want {
				g, ok := got[name]
				if !ok {
					t.Errorf("no host metric %s", name)
					continue
				}
				bad := 0
				for i := range w {
					if !near(g[i], w[i]) {
						if bad++; bad <= 3 {
							t.Errorf("%s, sample %d: %v, the file says %v", name, i, g[i], w[i])
						}
					}
				}
			}
			for _, name := range names {
				if _, ok := want[name]; !ok {
					t.Errorf("host metric %s is not checked", name)
				}
			}

			if tc.path == file408 && backwards == 0 {
				t.Errorf("no counter went back in the 4.0.8 file: the clamp is not tested")
			}

			// The units, against the file's own other figures.
			if facts := mustRun(t, st, run).Host; facts.MemoryBytes > 0 {
				if d := math.Abs(got["mem.total"][0] - float64(facts.MemoryBytes)); d >= 1<<20 {
					t.Errorf("mem.total %v bytes, hostInfo's memSizeMB %d MiB: %v bytes apart", got["mem.total"][0], facts.MemoryBytes>>20, d)
				}
			} else if tc.path != file8015 {
				t.Errorf("no hostInfo memory size to check mem.total against")
			}
			var cpuMs, wallMs float64
			for i := 1; i < n; i++ {
				cpuMs += cpuTotal[i]
				wallMs += at[i] - at[i-1]
			}
			cpus := want["cpu.count"][0]
			t.Logf("cpu counters: %.3f ms per ms, %v CPUs; mem.total %v bytes; %d host samples", cpuMs/wallMs, cpus, got["mem.total"][0], n)
			if per := cpuMs / wallMs; per < 0.9*cpus || per > 1.05*cpus {
				t.Errorf("the cpu counters grow by %.2f ms per ms with %v CPUs: not milliseconds", per, cpus)
			}
			for i := 1; i < n; i++ {
				sum := 0.0
				for _, s := range cpuStates {
					sum += got["cpu."+s][i]
				}
				if math.Abs(sum-100) > 1e-6 {
					t.Fatalf("sample %d: the CPU shares add up to %v", i, sum)
				}
			}

			// The figures stored as host metrics are not stored again;
			// the others keep their names in the server's source.
			server, err := st.MetricNames(ctx, run, "server:m1")
			if err != nil {
				t.Fatal(err)
			}
			for _, gone := range []string{"systemMetrics.cpu.user_ms", "systemMetrics.memory.MemTotal_kb", "systemMetrics.cpu.num_cpus", "systemMetrics.cpu.num_logical_cores"} {
				if slices.Contains(server, gone) {
					t.Errorf("server:m1 still has %s", gone)
				}
			}
			for _, kept := range []string{"systemMetrics.cpu.ctxt", "systemMetrics.memory.SwapTotal_kb", "systemMetrics.cpu.guest_ms"} {
				if !slices.Contains(server, kept) {
					t.Errorf("server:m1 lacks %s", kept)
				}
			}
		})
	}
}

// TestNoSystemMetricsNoHost: a file without systemMetrics (3.2 on Arch
// Linux, 7.0 on Windows) gives no host samples at all, rather than zeros.
func TestNoSystemMetricsNoHost(t *testing.T) {
	for _, path := range []string{file3210, file7012} {
		ctx := context.Background()
		st := openStore(t)
		rep, err := Import(ctx, st, []string{path}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.SourceSampleCount(ctx, rep.Runs[0].Run, HostSource)
		if err != nil || n != 0 {
			t.Errorf("%s: %d host samples (%v), want none", path, n, err)
		}
	}
}

func scaled(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i := range v {
		out[i] = v[i] * k
	}
	return out
}

func diff(a, b []float64, k float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = math.Max(a[i]-b[i], 0) * k
	}
	return out
}

func mustRun(t *testing.T, st *store.Store, id int64) store.Run {
	t.Helper()
	r, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
