package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// node is a YAML node of the config file, for checked reading: every error
// names the file and line.
type node struct {
	file string
	n    *yaml.Node
}

func (y node) errf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", y.file, y.n.Line, fmt.Sprintf(format, args...))
}

// fields reads a mapping whose keys must be among allowed: an unknown or
// repeated key is an error naming it.
func (y node) fields(what string, allowed ...string) (map[string]node, error) {
	if y.n.Kind != yaml.MappingNode {
		return nil, y.errf("%s must be a mapping (key: value lines), got %s", what, kindName(y.n))
	}
	out := map[string]node{}
	for i := 0; i+1 < len(y.n.Content); i += 2 {
		k, v := y.n.Content[i], y.n.Content[i+1]
		key := k.Value
		if !slices.Contains(allowed, key) {
			sorted := append([]string(nil), allowed...)
			sort.Strings(sorted)
			return nil, node{y.file, k}.errf("unknown key %q in %s (allowed: %s)", key, what, strings.Join(sorted, ", "))
		}
		if _, dup := out[key]; dup {
			return nil, node{y.file, k}.errf("%s: %s given twice", what, key)
		}
		out[key] = node{y.file, v}
	}
	return out, nil
}

// items reads a sequence.
func (y node) items(what string) ([]node, error) {
	if y.n.Kind != yaml.SequenceNode {
		return nil, y.errf("%s must be a list, got %s", what, kindName(y.n))
	}
	out := make([]node, len(y.n.Content))
	for i, c := range y.n.Content {
		out[i] = node{y.file, c}
	}
	return out, nil
}

func (y node) str(what string) (string, error) {
	if y.n.Kind != yaml.ScalarNode || y.n.Tag == "!!null" {
		return "", y.errf("%s must be a string, got %s", what, kindName(y.n))
	}
	return y.n.Value, nil
}

func (y node) boolean(what string) (bool, error) {
	var b bool
	if y.n.Kind != yaml.ScalarNode || y.n.Tag != "!!bool" || y.n.Decode(&b) != nil {
		return false, y.errf("%s must be true or false, got %s", what, kindName(y.n))
	}
	return b, nil
}

// integer reads a whole number, at least min.
func (y node) integer(what string, min int) (int, error) {
	var v int
	if y.n.Kind != yaml.ScalarNode || y.n.Tag != "!!int" || y.n.Decode(&v) != nil {
		return 0, y.errf("%s must be a whole number, got %s", what, kindName(y.n))
	}
	if v < min {
		return 0, y.errf("%s %d must be at least %d", what, v, min)
	}
	return v, nil
}

// duration reads a Go duration ("90s", "2h30m"), at least min.
func (y node) duration(what string, min time.Duration) (time.Duration, error) {
	s, err := y.str(what)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, y.errf("%s %q is not a duration such as 90s, 10m or 2h30m", what, s)
	}
	if d < min {
		return 0, y.errf("%s %s must be at least %s", what, d, min)
	}
	return d, nil
}

// scalar reads a number, boolean or string as Go's int64, float64, bool
// or string.
func (y node) scalar(what string) (any, error) {
	if y.n.Kind != yaml.ScalarNode {
		return nil, y.errf("%s must be a number, boolean or string, got %s", what, kindName(y.n))
	}
	switch y.n.Tag {
	case "!!int":
		if v, err := strconv.ParseInt(y.n.Value, 0, 64); err == nil {
			return v, nil
		}
		var v int64
		if err := y.n.Decode(&v); err != nil {
			return nil, y.errf("%s: %v", what, err)
		}
		return v, nil
	case "!!float":
		var v float64
		if err := y.n.Decode(&v); err != nil {
			return nil, y.errf("%s: %v", what, err)
		}
		return v, nil
	case "!!bool":
		return y.boolean(what)
	case "!!str":
		return y.n.Value, nil
	}
	return nil, y.errf("%s must be a number, boolean or string, got %s", what, kindName(y.n))
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.Tag {
	case "!!null":
		return "nothing"
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	}
	return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), n.Value)
}
