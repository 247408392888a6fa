package playbooks

import (
	"strconv"
	"strings"
	"testing"
)

// checkTTLOffpeak reads ttl_offpeak.lua's summary: with expiry in the
// peak the TTL monitor deletes during the peak; moved off-peak it deletes
// nothing then and everything (the 3000 loaded and the peak's inserts) at
// night; no expired document is left either way.
func checkTTLOffpeak(t *testing.T, out string) {
	t.Helper()
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 11 && (f[0] == "peak" || f[0] == "offpeak") {
			rows[f[0]] = f
			t.Log(line) // the summary row, for a failure's reader
		}
	}
	num := func(phase string, col int) int {
		f, ok := rows[phase]
		if !ok {
			t.Fatalf("no %s row in the summary:\n%s", phase, out)
		}
		n, err := strconv.Atoi(f[col])
		if err != nil {
			t.Fatalf("%s column %d: %q", phase, col, f[col])
		}
		return n
	}
	// Columns: phase, ops/s, p50, p99, errors, peak deletes, peak passes, night deletes, night passes, night s, left.
	// The 3000 expire evenly over the peak's last 5 s (from its planned
	// start; it begins up to a second later). What expired after a pass
	// began, and what a pass at the end had not finished, is deleted after
	// the peak: a third of the 3000 in the peak leaves the monitor up to
	// 3 s behind expiry, on a busy machine.
	if d := num("peak", 5); d < 1000 {
		t.Errorf("expiry in the peak: %d deletes during the peak, want at least a third of the 3000", d)
	}
	if d := num("offpeak", 5); d != 0 {
		t.Errorf("expiry off-peak: %d deletes during the peak, want 0", d)
	}
	if d := num("offpeak", 7); d < 3000 {
		t.Errorf("expiry off-peak: %d deletes at night, want at least the 3000 loaded", d)
	}
	for _, phase := range []string{"peak", "offpeak"} {
		if n := num(phase, 4); n != 0 {
			t.Errorf("%s: %d failed operations in the peak", phase, n)
		}
		if n := num(phase, 10); n != 0 {
			t.Errorf("%s: %d expired documents left", phase, n)
		}
	}
}
