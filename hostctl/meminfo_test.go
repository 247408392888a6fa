package hostctl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMeminfoFixture(t *testing.T) {
	got, err := fixtureHost().Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	const k = 1024
	want := Meminfo{
		MemTotal: 24683584 * k, MemFree: 20213996 * k, MemAvailable: 23332380 * k,
		Buffers: 3816 * k, Cached: 2299232 * k, Active: 168688 * k, Inactive: 133228 * k,
		ActiveFile: 167144 * k, InactiveFile: 126544 * k, Dirty: 184 * k, Writeback: 12 * k,
		SwapTotal: 2097148 * k, SwapFree: 2096124 * k, Shmem: 9356 * k, Mapped: 11156 * k,
		AnonPages: 11892 * k,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Meminfo (-want +got):\n%s", d)
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Meminfo
		wantErr string
	}{
		{name: "kB to bytes", in: "MemTotal: 2 kB\nCached: 1 kB\n", want: Meminfo{MemTotal: 2048, Cached: 1024}},
		{name: "unitless counts are ignored keys", in: "MemTotal: 1 kB\nHugePages_Total: 5\n", want: Meminfo{MemTotal: 1024}},
		{name: "no MemTotal", in: "Cached: 1 kB\n", wantErr: "no MemTotal"},
		{name: "bad unit", in: "MemTotal: 1 MB\n", wantErr: `unexpected unit "MB"`},
		{name: "bad number", in: "MemTotal: x kB\n", wantErr: "parse MemTotal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMeminfo(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestMeminfoMissing(t *testing.T) {
	h := &Host{ProcRoot: t.TempDir()}
	if _, err := h.Meminfo(); err == nil || !strings.HasPrefix(err.Error(), "read meminfo: ") {
		t.Fatalf("err = %v, want read meminfo: ...", err)
	}
}
