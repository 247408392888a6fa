package hostctl

import (
	"context"
	"os"
	"strings"

	"github.com/shirou/gopsutil/v4/host"
)

// Virtualization says whether, and under what, the host is virtualised.
type Virtualization struct {
	// System is what gopsutil detected ("kvm", "xen", "docker", "lxc", ...)
	// or "" when it found nothing.
	System string `json:"system"`
	// Role is "guest" or "host" as gopsutil reports it, or "".
	Role string `json:"role"`
	// Hypervisor is the "hypervisor" CPU flag: a virtual machine.
	Hypervisor bool `json:"hypervisor"`
	// ProductName and SysVendor come from <sys>/class/dmi/id, e.g.
	// "KVM" / "QEMU", "Virtual Machine" / "Microsoft Corporation".
	ProductName string `json:"product_name"`
	SysVendor   string `json:"sys_vendor"`
}

// virtualization combines gopsutil's detection with the DMI strings and the
// CPU's hypervisor flag, which are evidence on their own. gopsutil caches
// its answer for the life of the process, whatever the roots.
func (h *Host) virtualization(pctx context.Context, ci cpuInfo) Virtualization {
	v := Virtualization{
		Hypervisor:  ci.Hypervisor,
		ProductName: h.dmiString("product_name"),
		SysVendor:   h.dmiString("sys_vendor"),
	}
	if sys, role, err := host.VirtualizationWithContext(pctx); err == nil {
		v.System, v.Role = sys, role
	}
	return v
}

// dmiString reads <sys>/class/dmi/id/<name>, or "" when it cannot.
func (h *Host) dmiString(name string) string {
	b, err := os.ReadFile(h.sysPath("class", "dmi", "id", name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
