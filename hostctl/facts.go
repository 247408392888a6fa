package hostctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
)

// Facts describes the machine a run happened on, recorded with the run.
type Facts struct {
	Hostname        string         `json:"hostname"`
	OS              string         `json:"os"`
	Platform        string         `json:"platform"`
	PlatformVersion string         `json:"platform_version"`
	KernelRelease   string         `json:"kernel_release"`
	Arch            string         `json:"arch"`
	CPUModel        string         `json:"cpu_model"`
	LogicalCores    int            `json:"logical_cores"`
	PhysicalCores   int            `json:"physical_cores"`
	MemTotalBytes   uint64         `json:"mem_total_bytes"`
	Virtualization  Virtualization `json:"virtualization"`
	Disk            DiskFacts      `json:"disk"`
}

// Facts gathers what the host is: CPU, memory, kernel, OS, virtualisation,
// hostname and the disk that holds dataPath. It fills in what it can; the
// error, when not nil, names the facts that could not be read.
func (h *Host) Facts(ctx context.Context, dataPath string) (Facts, error) {
	if err := ctx.Err(); err != nil {
		return Facts{}, fmt.Errorf("gather host facts: %w", err)
	}
	pctx := h.psContext(ctx)
	f := Facts{OS: runtime.GOOS, Arch: runtime.GOARCH}
	var errs []error
	fail := func(what string, err error) {
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
	}

	f.Hostname = h.kernelString("hostname")
	if f.Hostname == "" {
		if hn, err := os.Hostname(); err == nil {
			f.Hostname = hn
		}
	}
	f.KernelRelease = h.kernelString("osrelease")
	if f.KernelRelease == "" {
		if kr, err := host.KernelVersionWithContext(pctx); err == nil {
			f.KernelRelease = kr
		} else {
			fail("kernel release", err)
		}
	}
	if p, _, v, err := host.PlatformInformationWithContext(pctx); err == nil {
		f.Platform, f.PlatformVersion = p, v
	}

	ci, err := h.cpuInfo()
	if err != nil {
		fail("cpuinfo", err)
	}
	f.CPUModel = ci.Model
	if n, err := cpu.CountsWithContext(pctx, true); err == nil {
		f.LogicalCores = n
	} else {
		fail("logical cores", err)
	}
	if n, err := cpu.CountsWithContext(pctx, false); err == nil {
		f.PhysicalCores = n
	} else {
		fail("physical cores", err)
	}

	if m, err := h.Meminfo(); err == nil {
		f.MemTotalBytes = m.MemTotal
	} else {
		fail("memory", err)
	}

	f.Virtualization = h.virtualization(pctx, ci)

	if dataPath != "" {
		d, err := h.diskFacts(ctx, dataPath)
		f.Disk = d
		if err != nil {
			fail("disk of "+dataPath, err)
		}
	}
	if len(errs) > 0 {
		return f, fmt.Errorf("gather host facts: %w", errors.Join(errs...))
	}
	return f, nil
}

// kernelString reads <proc>/sys/kernel/<name>, or "" when it cannot.
func (h *Host) kernelString(name string) string {
	b, err := os.ReadFile(h.procPath("sys", "kernel", name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (h *Host) cpuInfo() (cpuInfo, error) {
	f, err := os.Open(h.procPath("cpuinfo"))
	if err != nil {
		return cpuInfo{}, err
	}
	defer f.Close()
	return parseCPUInfo(f)
}
