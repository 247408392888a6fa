package hostctl

import (
	"context"
	"os"
	"path/filepath"

	"github.com/shirou/gopsutil/v4/common"
)

// Host is the machine wtd runs on, seen through its /proc and /sys trees.
// Every read of /proc and /sys in this package goes through these roots.
type Host struct {
	// ProcRoot is where procfs is mounted; "/proc" on a normal host.
	ProcRoot string
	// SysRoot is where sysfs is mounted; "/sys" on a normal host.
	SysRoot string

	// EUID reports the effective user id; nil means os.Geteuid. Tests
	// replace it to see what an unprivileged (or a root) run does.
	EUID func() int
	// DropCachesFile is the file DropCaches writes; "" means
	// <ProcRoot>/sys/vm/drop_caches. Tests point it at a plain file so that
	// nothing host-wide happens while the rest of the host is real.
	DropCachesFile string
}

// NewHost returns the real host: /proc and /sys.
func NewHost() *Host {
	return &Host{ProcRoot: "/proc", SysRoot: "/sys"}
}

func (h *Host) procPath(elem ...string) string {
	root := h.ProcRoot
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (h *Host) sysPath(elem ...string) string {
	root := h.SysRoot
	if root == "" {
		root = "/sys"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (h *Host) geteuid() int {
	if h.EUID != nil {
		return h.EUID()
	}
	return os.Geteuid()
}

// psContext returns ctx carrying the host roots for gopsutil, which reads
// HOST_PROC and HOST_SYS from the context before the environment.
func (h *Host) psContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{
		common.HostProcEnvKey: h.procPath(),
		common.HostSysEnvKey:  h.sysPath(),
	})
}
