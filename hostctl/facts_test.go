package hostctl

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestFactsFixture(t *testing.T) {
	dir := t.TempDir()
	f, err := fixtureHost().Facts(context.Background(), dir+"/not/yet/created")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"hostname", f.Hostname, "fixturehost"},
		{"kernel", f.KernelRelease, "6.1.0-18-amd64"},
		{"cpu model", f.CPUModel, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"},
		{"logical cores", f.LogicalCores, 4},
		{"physical cores", f.PhysicalCores, 2},
		{"memory", f.MemTotalBytes, uint64(24683584 * 1024)},
		{"hypervisor flag", f.Virtualization.Hypervisor, true},
		{"dmi product", f.Virtualization.ProductName, "KVM"},
		{"dmi vendor", f.Virtualization.SysVendor, "QEMU"},
		// The temp dir is under "/" in the fixture mount table: /dev/sda1,
		// whose disk sda is rotational.
		{"device", f.Disk.Device, "/dev/sda1"},
		{"fstype", f.Disk.Fstype, "ext4"},
		{"mountpoint", f.Disk.Mountpoint, "/"},
		{"rotational", f.Disk.Rotational != nil && *f.Disk.Rotational, true},
	}
	for _, c := range checks {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	if f.Disk.SizeBytes == 0 {
		t.Error("disk size is 0")
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"logical_cores":4`, `"kernel_release":`, `"mem_total_bytes":`, `"rotational":true`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
}

func TestFactsRealHost(t *testing.T) {
	f, err := NewHost().Facts(context.Background(), t.TempDir())
	if err != nil {
		t.Logf("partial facts: %v", err)
	}
	if f.LogicalCores < 1 || f.MemTotalBytes == 0 || f.KernelRelease == "" || f.Hostname == "" {
		t.Errorf("facts of this host look empty: %+v", f)
	}
}

func TestMountFor(t *testing.T) {
	mounts := []mount{
		{"/dev/sda1", "/", "ext4"},
		{"/dev/nvme0n1p1", "/data", "xfs"},
		{"tmpfs", "/data/tmp", "tmpfs"},
		{"/dev/sdb1", "/dat", "ext4"},
	}
	tests := []struct{ path, want string }{
		{"/data/db", "/data"},
		{"/data", "/data"},
		{"/data/tmp/x", "/data/tmp"},
		{"/database", "/"},
		{"/dat/x", "/dat"},
	}
	for _, tt := range tests {
		m, ok := mountFor(mounts, tt.path)
		if !ok || m.Mountpoint != tt.want {
			t.Errorf("mountFor(%s) = %+v, %v; want %s", tt.path, m, ok, tt.want)
		}
	}
}

func TestRotational(t *testing.T) {
	h := fixtureHost()
	tests := []struct {
		device string
		want   *bool
	}{
		{"/dev/sda", ptr(true)},
		{"/dev/sda2", ptr(true)},
		{"/dev/nvme0n1p1", ptr(false)},
		{"/dev/nvme0n1", ptr(false)},
		{"/dev/sdz1", nil},
		{"overlay", nil},
		{"tmpfs", nil},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, h.rotational(tt.device)); d != "" {
			t.Errorf("rotational(%s) (-want +got):\n%s", tt.device, d)
		}
	}
}

func ptr[T any](v T) *T { return &v }
