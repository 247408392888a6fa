package record

import (
	"slices"
	"testing"

	"wtd/hostctl"
)

func TestSettingsChanges(t *testing.T) {
	a := &Settings{Settings: hostctl.Settings{CacheSizeGB: 2, SetParameters: map[string]string{"x": "1", "y": "2"}},
		CacheMaxBytes: 2 << 30, Parameters: map[string]any{"p": map[string]any{"a": 1.0}}}
	b := &Settings{Settings: hostctl.Settings{CacheSizeGB: 1, EngineConfig: "eviction_target=60", SetParameters: map[string]string{"x": "3", "z": "4"}},
		CacheMaxBytes: 1 << 30, Parameters: map[string]any{"p": map[string]any{"a": 2.0}}}
	want := []string{`cacheSizeGB=1 (was 2)`, `engineConfig="eviction_target=60" (was "")`, "setParameter x=3 (was 1)",
		"setParameter y unset (was 2)", "setParameter z=4 (was unset)", "parameter p=map[a:2] (was map[a:1])"}
	if got := SettingsChanges(a, b); !slices.Equal(got, want) {
		t.Errorf("changes\n got %q\nwant %q", got, want)
	}
	if got := SettingsChanges(a, a); len(got) != 0 {
		t.Errorf("a against itself: %q", got)
	}
	if got := SettingsChanges(nil, b); got != nil {
		t.Errorf("unknown settings: %q, want nothing said", got)
	}
	// The cache's size in bytes, when no knob explains it (a host with
	// more memory, the server's default).
	c, d := &Settings{CacheMaxBytes: 1 << 30}, &Settings{CacheMaxBytes: 3 << 30}
	if got := SettingsChanges(c, d); !slices.Equal(got, []string{"cache maximum bytes=3221225472 (was 1073741824)"}) {
		t.Errorf("default caches: %q", got)
	}
}

func TestMatchTitleOfImportedSteps(t *testing.T) {
	imported := &Provenance{Reason: ImportedReason}
	for _, tc := range []struct {
		st   StepRecord
		want string
	}{
		{StepRecord{Name: "process", Labels: map[string]any{ChangedLabel: "cacheSizeGB=1"}, Provenance: imported}, "process"},
		{StepRecord{Name: "process", Provenance: imported}, "process"},
		// A playbook's own label named changed is part of its title.
		{StepRecord{Name: "reads", Labels: map[string]any{ChangedLabel: "yes"}, Provenance: &Provenance{Reason: "cold"}}, "reads (changed=yes)"},
		{StepRecord{Name: "w", Labels: map[string]any{ChangedLabel: "x", "round": 1}, Provenance: imported}, "w (round=1)"},
	} {
		if got := tc.st.MatchTitle(); got != tc.want {
			t.Errorf("%s: MatchTitle %q, want %q", tc.st.Title(), got, tc.want)
		}
	}
}
