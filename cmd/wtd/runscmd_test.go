package main

import (
	"strings"
	"testing"

	"wtd/engine/store"
)

// wtd runs lists the parameters that differ between the listed runs
// first, so that a list cut at 48 characters still tells the runs apart.
func TestRunsShowDifferingParamsFirst(t *testing.T) {
	common := map[string]any{"a_docs": float64(600000), "b_doc_bytes": float64(1000), "c_reads": float64(20000), "d_rounds": float64(3)}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	runs := []store.Run{
		{RunInfo: store.RunInfo{Params: with(map[string]any{"sizes": []any{0.25}})}},
		{RunInfo: store.RunInfo{Params: with(map[string]any{"sizes": []any{1.0}, "z_only": "x"})}},
	}
	differ := differingParams(runs)
	if len(differ) != 2 || !differ["sizes"] || !differ["z_only"] {
		t.Fatalf("differing = %v, want sizes and z_only", differ)
	}
	for i, want := range []string{"sizes=0.25 a_docs=600000", "sizes=1 z_only=x a_docs=600000"} {
		got := clip(paramsDifferingFirst(runs[i].Params, differ), 48)
		if !strings.HasPrefix(got, want) {
			t.Errorf("run %d: %q, want it to start %q", i, got, want)
		}
	}
	if got := paramsDifferingFirst(common, differingParams([]store.Run{{RunInfo: store.RunInfo{Params: common}}, {RunInfo: store.RunInfo{Params: common}}})); got != "a_docs=600000 b_doc_bytes=1000 c_reads=20000 d_rounds=3" {
		t.Errorf("same parameters: %q, want alphabetical", got)
	}
}
