package hostctl

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// cpuTimes is the aggregate "cpu" line of /proc/stat, in clock ticks.
type cpuTimes struct {
	User, Nice, System, Idle, Iowait, IRQ, SoftIRQ, Steal uint64
	// Count is the number of "cpuN" lines: the online logical CPUs.
	Count int
}

func (t cpuTimes) total() uint64 {
	// guest and guest_nice are already part of user and nice.
	return t.User + t.Nice + t.System + t.Idle + t.Iowait + t.IRQ + t.SoftIRQ + t.Steal
}

// parseCPUStat reads the aggregate cpu line and counts the per-CPU lines of
// /proc/stat.
func parseCPUStat(r io.Reader) (cpuTimes, error) {
	var t cpuTimes
	found := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			t.Count++
			continue
		}
		if len(f) < 5 {
			return cpuTimes{}, fmt.Errorf("short cpu line: %d fields", len(f))
		}
		dst := []*uint64{&t.User, &t.Nice, &t.System, &t.Idle, &t.Iowait, &t.IRQ, &t.SoftIRQ, &t.Steal}
		for i, p := range dst {
			if i+1 >= len(f) {
				break
			}
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("parse cpu field %d: %w", i+1, err)
			}
			*p = v
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return cpuTimes{}, err
	}
	if !found {
		return cpuTimes{}, fmt.Errorf("no aggregate cpu line")
	}
	return t, nil
}
