package workload

import (
	"fmt"
	"math"
)

// Units of WorkingSetKeys.
const (
	UnitFraction = "fraction"
	UnitMB       = "MB"
)

// WorkingSetKeys converts a working set into the number of keys that reads
// and updates pick from (Spec.WorkingSetKeys). With unit "fraction"
// (or "") workingSet is a share of the key space, in (0, 1]; with unit "MB"
// it is a size in MB of 2^20 bytes, turned into keys by avgDocBytes and
// capped at keySpace. The result is at least 1.
func WorkingSetKeys(workingSet float64, unit string, keySpace int64, avgDocBytes float64) (int64, error) {
	if keySpace < 1 {
		return 0, fmt.Errorf("working set: key space %d out of range [1, 2^63-1]", keySpace)
	}
	var keys float64
	switch unit {
	case "", UnitFraction:
		if !(workingSet > 0 && workingSet <= 1) {
			return 0, fmt.Errorf("working set %v out of range (0, 1] as a fraction of the key space", workingSet)
		}
		keys = math.Ceil(workingSet * float64(keySpace))
	case UnitMB:
		if !(workingSet > 0) || math.IsInf(workingSet, 0) {
			return 0, fmt.Errorf("working set %v MB out of range (0, +inf)", workingSet)
		}
		if !(avgDocBytes > 0) || math.IsInf(avgDocBytes, 0) {
			return 0, fmt.Errorf("working set: average document size %v bytes out of range (0, +inf)", avgDocBytes)
		}
		keys = math.Ceil(workingSet * mib / avgDocBytes)
	default:
		return 0, fmt.Errorf("working set unit %q is not %q or %q", unit, UnitFraction, UnitMB)
	}
	if keys >= float64(keySpace) {
		return keySpace, nil
	}
	return max(1, int64(keys)), nil
}
