package daemon

import "testing"

// TestAPIConnCapLeavesFilesForRuns: the API's cap is the configured one,
// lowered to a quarter of the open file limit, never below 1; an unknown
// limit leaves the configured cap.
func TestAPIConnCapLeavesFilesForRuns(t *testing.T) {
	for _, tc := range []struct {
		configured int
		nofile     uint64
		want       int
	}{
		{64, 1 << 20, 64},
		{64, 1024, 64},
		{64, 200, 50},
		{500, 1024, 256},
		{64, 3, 1},
		{64, 0, 64},
	} {
		if got := apiConnCap(tc.configured, tc.nofile); got != tc.want {
			t.Errorf("apiConnCap(%d, %d) = %d, want %d", tc.configured, tc.nofile, got, tc.want)
		}
	}
	if n := openFileLimit(); n < 64 {
		t.Errorf("open file limit %d: want the process's RLIMIT_NOFILE", n)
	}
}
