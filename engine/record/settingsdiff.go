package record

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// SettingsChanges words what differs from settings a to settings b, one
// setting a string ("cacheSizeGB=1 (was 2)", "setParameter x=3 (was
// unset)"): the knobs, the setParameters of the command line, the server
// parameters recorded and the cache's size in bytes when no knob explains
// it. Nil settings are not known: nothing is said of them.
func SettingsChanges(a, b *Settings) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	gb := func(v float64) string {
		if v == 0 {
			return "default"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if a.CacheSizeGB != b.CacheSizeGB {
		out = append(out, fmt.Sprintf("cacheSizeGB=%s (was %s)", gb(b.CacheSizeGB), gb(a.CacheSizeGB)))
	} else if a.CacheMaxBytes != b.CacheMaxBytes && a.CacheMaxBytes > 0 && b.CacheMaxBytes > 0 {
		out = append(out, fmt.Sprintf("cache maximum bytes=%d (was %d)", b.CacheMaxBytes, a.CacheMaxBytes))
	}
	if a.EngineConfig != b.EngineConfig {
		out = append(out, fmt.Sprintf("engineConfig=%q (was %q)", b.EngineConfig, a.EngineConfig))
	}
	if a.SyncDelay != b.SyncDelay {
		out = append(out, fmt.Sprintf("syncdelay=%s (was %s)", gb(b.SyncDelay), gb(a.SyncDelay)))
	}
	out = append(out, mapChanges("setParameter ", a.SetParameters, b.SetParameters)...)
	out = append(out, mapChanges("parameter ", a.Parameters, b.Parameters)...)
	return out
}

// mapChanges words the keys of a and b whose values differ as text (a
// parameter's value may be a document).
func mapChanges[V any](prefix string, a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		va, okA := a[k]
		vb, okB := b[k]
		switch {
		case okA && okB && fmt.Sprint(va) == fmt.Sprint(vb):
		case !okB:
			out = append(out, fmt.Sprintf("%s%s unset (was %v)", prefix, k, va))
		case !okA:
			out = append(out, fmt.Sprintf("%s%s=%v (was unset)", prefix, k, vb))
		default:
			out = append(out, fmt.Sprintf("%s%s=%v (was %v)", prefix, k, vb, va))
		}
	}
	return out
}
