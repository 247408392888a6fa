// Package mongodconf reads and edits mongod's YAML configuration file:
// the knobs it sets (Settings, by the table of knobs' config keys), a
// key's value (Value), edits of keys that keep the rest of the file, its
// comments and its indentation (Apply), and writing it back with its
// owner and mode (WriteAs). It knows nothing of runs or servers.
package mongodconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"wtd/hostctl"

	"go.yaml.in/yaml/v3"
)

func FormatG(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ScalarTag is the YAML type a setParameter value is written with.
func ScalarTag(v string) string {
	if v == "true" || v == "false" {
		return "!!bool"
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return "!!int"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return "!!float"
	}
	return "!!str"
}

// Parse parses a YAML config file into its document node (a
// mapping; an empty file gives an empty one).
func Parse(data []byte) (*yaml.Node, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parse the YAML config: %w", err)
	}
	if len(root.Content) == 0 {
		return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}, nil
	}
	if root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("parse the YAML config: no map at the top level (an INI-style config file cannot be edited)")
	}
	return &root, nil
}

// Apply applies edits to a YAML config file and returns the new text.
// The other keys, their order and the comments are kept (yaml.Node);
// blank lines, the indentation where it is not uniform and the quoting of
// the edited values are not (see README).
func Apply(data []byte, edits []Edit) ([]byte, error) {
	root, err := Parse(data)
	if err != nil {
		return nil, err
	}
	for _, e := range edits {
		n := lookupOrCreate(root.Content[0], strings.Split(e.Key, "."))
		if n == nil {
			return nil, fmt.Errorf("config key %s: a parent is not a map", e.Key)
		}
		tag := e.Tag
		if tag != "!!str" {
			tag = ScalarTag(e.Value) // 25 is written 25, not !!float 25
		}
		n.Kind, n.Tag, n.Value, n.Content, n.Alias = yaml.ScalarNode, tag, e.Value, nil, nil
		n.Style = 0
		if e.Tag == "!!str" && ScalarTag(e.Value) != "!!str" || e.Value == "" {
			n.Style = yaml.DoubleQuotedStyle
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(detectIndent(data))
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("write the YAML config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the YAML config: %w", err)
	}
	return buf.Bytes(), nil
}

// lookupOrCreate returns the value node at path in mapping m, adding
// empty maps and a null leaf where keys are missing; nil when a parent is
// not a map.
func lookupOrCreate(m *yaml.Node, path []string) *yaml.Node {
	for i, k := range path {
		if m.Kind != yaml.MappingNode {
			return nil
		}
		var v *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == k {
				v = m.Content[j+1]
			}
		}
		if v == nil {
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
			if i < len(path)-1 {
				v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, v)
		}
		if v.Kind == yaml.MappingNode && v.Style == yaml.FlowStyle {
			v.Style = 0
		}
		m = v
	}
	return m
}

// detectIndent is the indentation of the file's first indented line (2
// when there is none).
func detectIndent(data []byte) int {
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimLeft(line, " ")
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "-") {
			continue
		}
		if n := len(line) - len(t); n >= 2 && n <= 8 {
			return n
		}
	}
	return 2
}

// Value returns the scalar at a dotted key, "" when absent.
func Value(root *yaml.Node, key string) string {
	m := root.Content[0]
	for _, k := range strings.Split(key, ".") {
		if m.Kind != yaml.MappingNode {
			return ""
		}
		var next *yaml.Node
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == k {
				next = m.Content[j+1]
			}
		}
		if next == nil {
			return ""
		}
		m = next
	}
	if m.Kind != yaml.ScalarNode {
		return ""
	}
	return m.Value
}

// Settings reads the tuning settings of a config file, for wtd's
// settings checks (hostctl.Settings.Check).
func Settings(data []byte) (hostctl.Settings, error) {
	root, err := Parse(data)
	if err != nil {
		return hostctl.Settings{}, err
	}
	return hostctl.ReadSettings(func(key string) (string, bool) {
		v := Value(root, key)
		return v, v != ""
	}, func(key string) map[string]string {
		return configMap(root, key)
	})
}

// configMap returns the scalars of the map at a top-level key, nil when
// there is no map there.
func configMap(root *yaml.Node, key string) map[string]string {
	var out map[string]string
	m := root.Content[0]
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key && m.Content[j+1].Kind == yaml.MappingNode {
			sp := m.Content[j+1]
			out = map[string]string{}
			for k := 0; k+1 < len(sp.Content); k += 2 {
				out[sp.Content[k].Value] = sp.Content[k+1].Value
			}
		}
	}
	return out
}

// Owner is a file's mode and owner, kept across a rewrite.
type Owner struct {
	Mode uint32 `json:"mode"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
}

func StatOwner(path string) (Owner, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Owner{}, err
	}
	o := Owner{Mode: uint32(st.Mode().Perm()), UID: -1, GID: -1}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		o.UID, o.GID = int(sys.Uid), int(sys.Gid)
	}
	return o, nil
}

// WriteAs replaces path with data atomically (a temp file in the same
// directory, renamed over it), giving it the mode and owner o. Changing
// the owner needs the right to (root, or the same owner); a failure to is
// an error only when the owner would differ.
func WriteAs(path string, data []byte, o Owner) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".wtd-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(os.FileMode(o.Mode)); err != nil {
		return fail(err)
	}
	if o.UID >= 0 {
		if err := tmp.Chown(o.UID, o.GID); err != nil {
			if now, serr := StatOwner(name); serr != nil || now.UID != o.UID || now.GID != o.GID {
				return fail(err)
			}
		}
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Edit sets one key of a YAML config file: Key is dotted
// ("storage.syncPeriodSecs"), Value the scalar's text and Tag its YAML
// type (!!float, !!int, !!bool, !!str).
type Edit struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Tag   string `json:"tag"`
}
