package hostctl

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUStat(t *testing.T) {
	f, err := os.Open("testdata/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseCPUStat(f)
	if err != nil {
		t.Fatal(err)
	}
	want := cpuTimes{User: 1000, Nice: 10, System: 500, Idle: 8000, Iowait: 300, IRQ: 20, SoftIRQ: 30, Steal: 140, Count: 4}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := parseCPUStat(strings.NewReader("intr 1 2\n")); err == nil {
		t.Error("no error without a cpu line")
	}
	// Old kernels have only four fields.
	old, err := parseCPUStat(strings.NewReader("cpu 1 2 3 4\n"))
	if err != nil || old.Idle != 4 || old.Steal != 0 {
		t.Errorf("four-field line: %+v, %v", old, err)
	}
}

func TestParseLoadavg(t *testing.T) {
	got, err := parseLoadavg("0.52 0.58 0.59 1/467 12345\n")
	if err != nil {
		t.Fatal(err)
	}
	if got != (loadAvg{0.52, 0.58, 0.59}) {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"", "1 2", "a b c"} {
		if _, err := parseLoadavg(bad); err == nil {
			t.Errorf("parseLoadavg(%q): no error", bad)
		}
	}
}

func TestParseDiskstats(t *testing.T) {
	f, err := os.Open("testdata/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseDiskstats(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]diskStat{
		"sda":     {Reads: 4000, ReadBytes: 800000 * 512, Writes: 2000, WriteBytes: 400000 * 512, IOTimeMs: 5000},
		"sda1":    {Reads: 3900, ReadBytes: 790000 * 512, Writes: 1990, WriteBytes: 399000 * 512, IOTimeMs: 4900},
		"nvme0n1": {Reads: 10000, ReadBytes: 2000000 * 512, Writes: 5000, WriteBytes: 1000000 * 512, IOTimeMs: 3000},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("loop and ram must be skipped (-want +got):\n%s", d)
	}
}

func TestParsePIDStat(t *testing.T) {
	b, err := os.ReadFile("testdata/proc/4242/stat")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsePIDStat(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if want := (procStat{UTime: 250, STime: 50, RSSPages: 25600, StartTicks: 123456}); got != want {
		t.Errorf("got %+v, want %+v (a name with spaces and parentheses)", got, want)
	}
	if _, err := parsePIDStat("1 (x) S 1 2"); err == nil {
		t.Error("short line: no error")
	}
}

func TestParsePIDIO(t *testing.T) {
	f, err := os.Open("testdata/proc/4242/io")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := parsePIDIO(f)
	if err != nil || r != 409600 || w != 819200 {
		t.Errorf("got %d, %d, %v; want 409600, 819200", r, w, err)
	}
	if _, _, err := parsePIDIO(strings.NewReader("rchar: 1\n")); err == nil {
		t.Error("no error without read_bytes")
	}
}

func TestParseCPUInfo(t *testing.T) {
	f, err := os.Open("testdata/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseCPUInfo(f)
	if err != nil {
		t.Fatal(err)
	}
	want := cpuInfo{Model: "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", Hypervisor: true}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	bare, _ := parseCPUInfo(strings.NewReader("processor\t: 0\nflags\t\t: fpu hypervisorx\n"))
	if bare.Hypervisor {
		t.Error("hypervisorx taken for hypervisor")
	}
	arm, _ := parseCPUInfo(strings.NewReader("Processor\t: ARMv7 rev 4 (v7l)\nFeatures\t: half thumb\n"))
	if arm.Model != "ARMv7 rev 4 (v7l)" {
		t.Errorf("ARM model = %q", arm.Model)
	}
}
