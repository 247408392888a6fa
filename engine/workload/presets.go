package workload

import (
	"fmt"
	"slices"
	"strings"
)

// Preset is a named workload: YCSB's core workloads A to F with their
// proportions and request distributions. YCSB's requestdistribution=zipfian
// is its scrambled zipfian, so the presets use DistScrambledZipfian, and
// their key shares are those of YCSB's published runs.
type Preset struct {
	Name         string
	What         string
	Mix          Mix
	Distribution string
	ScanMax      int
}

// Presets are the workloads Spec.Workload names.
var Presets = []Preset{
	{Name: "ycsb-a", What: "update heavy: 50% reads, 50% updates", Mix: Mix{Read: 0.5, Update: 0.5}, Distribution: DistScrambledZipfian},
	{Name: "ycsb-b", What: "read mostly: 95% reads, 5% updates", Mix: Mix{Read: 0.95, Update: 0.05}, Distribution: DistScrambledZipfian},
	{Name: "ycsb-c", What: "read only", Mix: Mix{Read: 1}, Distribution: DistScrambledZipfian},
	{Name: "ycsb-d", What: "read latest: 95% reads, 5% inserts, the newest keys hottest", Mix: Mix{Read: 0.95, Insert: 0.05}, Distribution: DistLatest},
	{Name: "ycsb-e", What: "short ranges: 95% scans of up to 100 documents, 5% inserts", Mix: Mix{Scan: 0.95, Insert: 0.05}, Distribution: DistScrambledZipfian, ScanMax: 100},
	{Name: "ycsb-f", What: "read-modify-write: 50% reads, 50% read-modify-writes", Mix: Mix{Read: 0.5, RMW: 0.5}, Distribution: DistScrambledZipfian},
}

// presetNames lists the presets' names.
func presetNames() []string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	return names
}

// applyPreset fills the fields of s that are left zero (the mix as a
// whole, the distribution, the scan length) from the preset s.Workload
// names, if any.
func applyPreset(s *Spec) error {
	if s.Workload == "" {
		return nil
	}
	s.Workload = strings.ToLower(s.Workload)
	i := slices.IndexFunc(Presets, func(p Preset) bool { return p.Name == s.Workload })
	if i < 0 {
		return fmt.Errorf("workload %q is not a preset: use %s", s.Workload, quoteList(presetNames()))
	}
	p := Presets[i]
	if s.Mix == (Mix{}) {
		s.Mix = p.Mix
	}
	if s.Distribution == "" {
		s.Distribution = p.Distribution
	}
	if s.ScanMax == 0 {
		s.ScanMax = p.ScanMax
	}
	return nil
}
