package hostctl

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// diskSectorBytes is the unit of the sector fields of /proc/diskstats,
// always 512 whatever the device's real sector size.
const diskSectorBytes = 512

// diskStat is one device line of /proc/diskstats.
type diskStat struct {
	Reads, ReadBytes, Writes, WriteBytes uint64
	// IOTimeMs is the time the device had I/O in flight, in milliseconds.
	IOTimeMs uint64
}

// parseDiskstats returns the counters of every device in /proc/diskstats
// except loop and ram devices, keyed by device name.
func parseDiskstats(r io.Reader) (map[string]diskStat, error) {
	out := make(map[string]diskStat)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 {
			continue
		}
		name := f[2]
		if skipDisk(name) {
			continue
		}
		var v [10]uint64
		for i := range v {
			x, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parse %s field %d: %w", name, 4+i, err)
			}
			v[i] = x
		}
		out[name] = diskStat{
			Reads:      v[0],
			ReadBytes:  v[2] * diskSectorBytes,
			Writes:     v[4],
			WriteBytes: v[6] * diskSectorBytes,
			IOTimeMs:   v[9],
		}
	}
	return out, sc.Err()
}

// skipDisk says whether a device is a loop or RAM device, which hold no
// data of interest to an experiment.
func skipDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
