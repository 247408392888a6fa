package hostctl

import (
	"bufio"
	"io"
	"slices"
	"strings"
)

// cpuInfo is what Facts takes from /proc/cpuinfo.
type cpuInfo struct {
	Model string
	// Hypervisor is true when the CPU flags carry "hypervisor": the kernel
	// runs under a hypervisor (a virtual machine).
	Hypervisor bool
}

// parseCPUInfo reads the first processor's model name and flags; the model
// falls back to the "Hardware"/"Processor" lines some ARM kernels print.
func parseCPUInfo(r io.Reader) (cpuInfo, error) {
	var ci cpuInfo
	var fallback string
	sawFlags := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "model name":
			if ci.Model == "" {
				ci.Model = val
			}
		case "Hardware", "Processor":
			if fallback == "" {
				fallback = val
			}
		case "flags", "Features":
			if !sawFlags {
				ci.Hypervisor = slices.Contains(strings.Fields(val), "hypervisor")
				sawFlags = true
			}
		}
	}
	if ci.Model == "" {
		ci.Model = fallback
	}
	return ci, sc.Err()
}
