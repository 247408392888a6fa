package hostctl

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// procStat is what the collector reads for one watched process.
type procStat struct {
	// UTime and STime are in clock ticks (USER_HZ).
	UTime, STime uint64
	// RSSPages is the resident set in pages.
	RSSPages uint64
	// StartTicks is when the process started, in clock ticks after boot.
	StartTicks uint64
	// ReadBytes and WriteBytes are the storage I/O of /proc/<pid>/io;
	// HasIO is false when that file could not be read.
	ReadBytes, WriteBytes uint64
	HasIO                 bool
}

// parsePIDStat parses /proc/<pid>/stat. The command name may contain
// spaces and parentheses, so fields are counted after the last ')'.
func parsePIDStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("no ')' after the command name")
	}
	// f[0] is field 3 (state); utime is field 14, stime 15, starttime 22,
	// rss 24.
	f := strings.Fields(s[i+1:])
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("short stat line: %d fields after the name", len(f))
	}
	get := func(field int) (uint64, error) {
		v, err := strconv.ParseInt(f[field-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse stat field %d: %w", field, err)
		}
		if v < 0 {
			v = 0
		}
		return uint64(v), nil
	}
	var st procStat
	var err error
	if st.UTime, err = get(14); err != nil {
		return procStat{}, err
	}
	if st.STime, err = get(15); err != nil {
		return procStat{}, err
	}
	if st.StartTicks, err = get(22); err != nil {
		return procStat{}, err
	}
	if st.RSSPages, err = get(24); err != nil {
		return procStat{}, err
	}
	return st, nil
}

// parsePIDIO reads read_bytes and write_bytes from /proc/<pid>/io.
func parsePIDIO(r io.Reader) (readBytes, writeBytes uint64, err error) {
	sc := bufio.NewScanner(r)
	seen := 0
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *uint64
		switch key {
		case "read_bytes":
			dst = &readBytes
		case "write_bytes":
			dst = &writeBytes
		default:
			continue
		}
		v, perr := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("parse %s: %w", key, perr)
		}
		*dst = v
		seen++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if seen < 2 {
		return 0, 0, fmt.Errorf("no read_bytes and write_bytes lines")
	}
	return readBytes, writeBytes, nil
}
