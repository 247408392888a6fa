package hostctl

import (
	"fmt"
	"strconv"
	"strings"
)

// loadAvg is the 1, 5 and 15 minute load average of /proc/loadavg.
type loadAvg struct {
	Load1, Load5, Load15 float64
}

// parseLoadavg parses "0.52 0.58 0.59 1/467 12345".
func parseLoadavg(s string) (loadAvg, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return loadAvg{}, fmt.Errorf("unexpected loadavg %q", strings.TrimSpace(s))
	}
	var v [3]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return loadAvg{}, fmt.Errorf("parse loadavg field %d: %w", i+1, err)
		}
		v[i] = x
	}
	return loadAvg{Load1: v[0], Load5: v[1], Load15: v[2]}, nil
}
