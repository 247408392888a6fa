package record

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"wtd/engine/store"
)

// ParamsShort words parameters as name=value, sorted by name; lists as
// comma lists.
func ParamsShort(params map[string]any) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+ParamValue(params[k]))
	}
	return strings.Join(parts, " ")
}

// ParamValue words one parameter value: numbers plainly, lists as comma lists.
func ParamValue(v any) string {
	if list, ok := v.([]any); ok {
		s := make([]string, len(list))
		for i, x := range list {
			s[i] = ParamValue(x)
		}
		return strings.Join(s, ",")
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// HostShort words a run's host facts in one line.
func HostShort(h store.HostFacts) string {
	return fmt.Sprintf("%d cores, %.1f GB memory, kernel %s, virtualisation %s, disk %s",
		h.Cores, float64(h.MemoryBytes)/(1<<30), orDashStr(h.Kernel), orDashStr(h.Virtualisation), orDashStr(strings.TrimSpace(h.Disk)))
}

// ServerHow says how a run had a server: started (binary, pid) or attached.
func ServerHow(s store.ServerRecord) string {
	if !s.Started {
		return "attached (not started by wtd)"
	}
	how := "started by wtd from " + s.Binary
	if s.PID > 0 {
		how += fmt.Sprintf(", pid %d", s.PID)
	}
	return how
}
