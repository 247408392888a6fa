package hostctl

import (
	"strings"
	"testing"
)

// TestSettingsCheckTheKnobsTheyCarry: a value of a knob carried inside
// engineConfig, wiredTigerEngineRuntimeConfig or setParameter is checked
// against its row of the knob table before a server starts, in
// WiredTiger's or mongod's words, and so are the rules between knobs.
func TestSettingsCheckTheKnobsTheyCarry(t *testing.T) {
	tests := []struct {
		name    string
		spec    Settings
		wantErr string // "" means valid
	}{
		{"mongod's own values", Settings{EngineConfig: "eviction_target=80,eviction_trigger=95,eviction_dirty_target=5," +
			"eviction_dirty_trigger=20,eviction=(threads_min=4,threads_max=4),checkpoint=(wait=0,log_size=0)",
			SetParameters: map[string]string{"wiredTigerConcurrentReadTransactions": "128", "storageEngineConcurrencyAdjustmentAlgorithm": "fixedConcurrentTransactions"}}, ""},
		{"eviction target below WiredTiger's minimum", Settings{EngineConfig: "eviction_target=5"},
			"engineConfig: eviction_target 5: Value too small for key 'eviction_target' the minimum is 10"},
		{"eviction threads above 20", Settings{EngineConfig: "eviction=(threads_min=1,threads_max=21)"},
			"engineConfig: eviction.threads_max 21: Value too large for key 'eviction.threads_max' the maximum is 20"},
		{"checkpoint wait above 100000", Settings{EngineConfig: "checkpoint=(wait=100001)"},
			"checkpoint.wait 100001: Value too large for key 'checkpoint.wait' the maximum is 100000"},
		{"checkpoint log_size in WiredTiger's units", Settings{EngineConfig: "checkpoint=(log_size=3GB)"},
			"checkpoint.log_size 3221225472: Value too large for key 'checkpoint.log_size' the maximum is 2147483648"},
		{"target at the trigger", Settings{EngineConfig: "eviction_target=90,eviction_trigger=90"},
			"engineConfig: eviction_target=90, eviction_trigger=90: eviction_target < eviction_trigger must hold"},
		{"the last value of a key counts", Settings{EngineConfig: "eviction_trigger=70,eviction_target=60,eviction_trigger=50"},
			"eviction_target=60, eviction_trigger=50: eviction_target < eviction_trigger must hold"},
		{"dirty target above dirty trigger", Settings{EngineConfig: "eviction_dirty_target=30,eviction_dirty_trigger=20"},
			"eviction_dirty_target < eviction_dirty_trigger must hold"},
		{"threads_min above threads_max", Settings{EngineConfig: "eviction=(threads_min=8,threads_max=4)"},
			"eviction.threads_min=8, eviction.threads_max=4: eviction.threads_min <= eviction.threads_max must hold"},
		{"threads_min at threads_max", Settings{EngineConfig: "eviction=(threads_min=6,threads_max=6)"}, ""},
		{"read tickets below 5", Settings{SetParameters: map[string]string{"wiredTigerConcurrentReadTransactions": "4"}},
			"setParameter wiredTigerConcurrentReadTransactions 4: Concurrent read transactions limit must be greater than or equal to 5"},
		{"write tickets by mongod 7.0's name", Settings{SetParameters: map[string]string{"storageEngineConcurrentWriteTransactions": "2"}},
			"setParameter storageEngineConcurrentWriteTransactions (wiredTigerConcurrentWriteTransactions): wiredTigerConcurrentWriteTransactions 2: Concurrent write transactions limit must be greater than or equal to 5"},
		{"tickets not a number", Settings{SetParameters: map[string]string{"wiredTigerConcurrentReadTransactions": "many"}},
			`wiredTigerConcurrentReadTransactions "many": must be a number`},
		{"ticket algorithm not one of mongod's", Settings{SetParameters: map[string]string{"storageEngineConcurrencyAdjustmentAlgorithm": "fast"}},
			"Enumeration value 'fast' for field 'storageEngineConcurrencyAdjustmentAlgorithm' is not a valid value"},
		{"runtime config checked at startup", Settings{SetParameters: map[string]string{"wiredTigerEngineRuntimeConfig": "eviction_trigger=5"}},
			"setParameter wiredTigerEngineRuntimeConfig: eviction_trigger 5: Value too small for key 'eviction_trigger' the minimum is 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Check()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Check() = %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Check() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestArgsAndRuntimeParametersCheckKnobs: the same rows check a
// --setParameter in args and a setParameter made while the server runs.
func TestArgsAndRuntimeParametersCheckKnobs(t *testing.T) {
	err := CheckArgs([]string{"--setParameter", "wiredTigerConcurrentWriteTransactions=3"})
	if err == nil || !strings.Contains(err.Error(), "args[2] --setParameter wiredTigerConcurrentWriteTransactions 3: Concurrent write transactions limit must be greater than or equal to 5") {
		t.Errorf("CheckArgs = %v, want the write tickets refused", err)
	}
	if err := CheckParameter("wiredTigerConcurrentReadTransactions", int32(4)); err == nil ||
		!strings.Contains(err.Error(), "must be greater than or equal to 5") {
		t.Errorf("CheckParameter(read tickets, 4) = %v, want refused", err)
	}
	if err := CheckParameter("wiredTigerConcurrentReadTransactions", 5.0); err != nil {
		t.Errorf("CheckParameter(read tickets, 5) = %v, want allowed", err)
	}
	if err := CheckParameter("wiredTigerEngineRuntimeConfig", "eviction=(threads_min=5,threads_max=2)"); err == nil ||
		!strings.Contains(err.Error(), "eviction.threads_min <= eviction.threads_max must hold") {
		t.Errorf("CheckParameter(runtime config) = %v, want the threads rule", err)
	}
}
