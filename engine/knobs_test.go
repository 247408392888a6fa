package engine

import (
	"context"
	"strings"
	"testing"
)

// TestReconfigureChecksKnobs: m:reconfigure refuses a WiredTiger knob
// out of its range, or two that break a rule, before it reaches any
// server (this Server has none: a string that got through would fail on
// the missing connection instead).
func TestReconfigureChecksKnobs(t *testing.T) {
	tests := []struct{ cfg, want string }{
		{"eviction_dirty_trigger=0", "reconfigure: eviction_dirty_trigger 0: Value too small for key 'eviction_dirty_trigger' the minimum is 1"},
		{"eviction=(threads_max=2,threads_min=3)", "reconfigure: eviction.threads_min=3, eviction.threads_max=2: eviction.threads_min <= eviction.threads_max must hold"},
		{"checkpoint=(wait=200000)", "reconfigure: checkpoint.wait 200000: Value too large for key 'checkpoint.wait' the maximum is 100000"},
	}
	for _, tt := range tests {
		var s Server
		err := s.ReconfigureKeep(context.Background(), tt.cfg, false)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReconfigureKeep(%q) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}
