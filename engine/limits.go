package engine

import (
	"fmt"
	"runtime/metrics"
	"strconv"
	"strings"
)

// LimitError is a run stopped because it went past one of its bounds: the
// memory limit (wtd run --max-memory) or the time one pattern match may
// take. The run ends failed with Msg as its reason.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// sizeUnits are the suffixes ParseBytes takes, longest first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseBytes reads a size such as "2GiB", "512MiB", "1.5G" (K, M, G and T
// are powers of 1024, KB, MB, GB and TB of 1000) or a plain number of
// bytes; it must be positive.
func ParseBytes(s string) (int64, error) {
	text := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	return int64(v * float64(mult)), nil
}

// FormatBytes words a size the way ParseBytes reads it: "256 MiB",
// "2 GiB", "1.5 GiB", "300 bytes".
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			v := strconv.FormatFloat(float64(n)/float64(u.size), 'f', 2, 64)
			return strings.TrimSuffix(strings.TrimRight(v, "0"), ".") + " " + u.name
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// memoryMetrics are what the Go runtime holds from the system and what of
// it it gave back.
var memoryMetrics = []string{"/memory/classes/total:bytes", "/memory/classes/heap/released:bytes"}

// MemoryInUse is the memory the Go runtime holds for this process (heap,
// stacks, its own structures), less what it returned to the system: about
// the process's resident memory, wtd being pure Go.
func MemoryInUse() int64 {
	samples := make([]metrics.Sample, len(memoryMetrics))
	for i, name := range memoryMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	return int64(samples[0].Value.Uint64()) - int64(samples[1].Value.Uint64())
}
