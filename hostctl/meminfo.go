package hostctl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Meminfo is the part of /proc/meminfo that experiments look at, in bytes.
type Meminfo struct {
	MemTotal     uint64 `json:"mem_total"`
	MemFree      uint64 `json:"mem_free"`
	MemAvailable uint64 `json:"mem_available"`
	Buffers      uint64 `json:"buffers"`
	Cached       uint64 `json:"cached"`
	SwapCached   uint64 `json:"swap_cached"`
	Active       uint64 `json:"active"`
	Inactive     uint64 `json:"inactive"`
	ActiveFile   uint64 `json:"active_file"`
	InactiveFile uint64 `json:"inactive_file"`
	Dirty        uint64 `json:"dirty"`
	Writeback    uint64 `json:"writeback"`
	SwapTotal    uint64 `json:"swap_total"`
	SwapFree     uint64 `json:"swap_free"`
	Shmem        uint64 `json:"shmem"`
	Mapped       uint64 `json:"mapped"`
	AnonPages    uint64 `json:"anon_pages"`
}

// Meminfo reads <proc>/meminfo.
func (h *Host) Meminfo() (Meminfo, error) {
	f, err := os.Open(h.procPath("meminfo"))
	if err != nil {
		return Meminfo{}, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	m, err := parseMeminfo(f)
	if err != nil {
		return Meminfo{}, fmt.Errorf("parse %s: %w", f.Name(), err)
	}
	return m, nil
}

// parseMeminfo parses the "Key:   123 kB" lines of /proc/meminfo. Keys it
// does not know are ignored; MemTotal must be present.
func parseMeminfo(r io.Reader) (Meminfo, error) {
	var m Meminfo
	fields := map[string]*uint64{
		"MemTotal":       &m.MemTotal,
		"MemFree":        &m.MemFree,
		"MemAvailable":   &m.MemAvailable,
		"Buffers":        &m.Buffers,
		"Cached":         &m.Cached,
		"SwapCached":     &m.SwapCached,
		"Active":         &m.Active,
		"Inactive":       &m.Inactive,
		"Active(file)":   &m.ActiveFile,
		"Inactive(file)": &m.InactiveFile,
		"Dirty":          &m.Dirty,
		"Writeback":      &m.Writeback,
		"SwapTotal":      &m.SwapTotal,
		"SwapFree":       &m.SwapFree,
		"Shmem":          &m.Shmem,
		"Mapped":         &m.Mapped,
		"AnonPages":      &m.AnonPages,
	}
	seenTotal := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		dst, known := fields[key]
		if !known {
			continue
		}
		v, err := parseMeminfoValue(rest)
		if err != nil {
			return Meminfo{}, fmt.Errorf("parse %s: %w", key, err)
		}
		*dst = v
		if key == "MemTotal" {
			seenTotal = true
		}
	}
	if err := sc.Err(); err != nil {
		return Meminfo{}, err
	}
	if !seenTotal {
		return Meminfo{}, fmt.Errorf("no MemTotal line")
	}
	return m, nil
}

// parseMeminfoValue turns "   24683584 kB" into bytes.
func parseMeminfoValue(s string) (uint64, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, fmt.Errorf("unexpected value %q", strings.TrimSpace(s))
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	if len(f) == 2 {
		if f[1] != "kB" {
			return 0, fmt.Errorf("unexpected unit %q", f[1])
		}
		v *= 1024
	}
	return v, nil
}
