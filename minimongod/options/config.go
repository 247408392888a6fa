package options

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// readConfigFile loads and parses the config file named by -f/--config.
// A file whose YAML form is a single scalar is read as an INI file, as
// mongod does.
func readConfigFile(path string) (env, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("Error reading config file: %s", strerror(err))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("Error parsing YAML config file: %v", err)
	}
	if len(root.Content) == 0 {
		return env{}, nil
	}
	doc := root.Content[0]
	if doc.Kind == yaml.ScalarNode && doc.Tag != "!!null" {
		return parseINI(string(data))
	}
	if doc.Kind != yaml.MappingNode {
		if doc.Tag == "!!null" {
			return env{}, nil
		}
		return nil, errors.New("No map found at top level of YAML config")
	}
	out := env{}
	if err := addYAMLMap(doc, "", out); err != nil {
		return nil, err
	}
	return out, nil
}

// strerror renders an OS error as glibc's strerror would.
func strerror(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := []rune(errno.Error())
	if len(msg) > 0 {
		msg[0] = unicode.ToUpper(msg[0])
	}
	return string(msg)
}

// addYAMLMap walks a mapping node, adding leaf values under dotted keys
// (options_parser.cpp addYAMLNodesToEnvironment).
func addYAMLMap(node *yaml.Node, parent string, out env) error {
	for i := 0; i+1 < len(node.Content); i += 2 {
		field, value := node.Content[i].Value, node.Content[i+1]
		key := joinKey(parent, field)
		if value.Kind == yaml.MappingNode && !isStringMap(key) {
			if err := addYAMLMap(value, key, out); err != nil {
				return err
			}
			continue
		}
		if err := addYAMLValue(key, value, out); err != nil {
			return err
		}
	}
	return nil
}

// joinKey builds the dotted name; a field called "value" names its parent.
func joinKey(parent, field string) string {
	switch {
	case parent == "":
		return field
	case field == "value":
		return parent
	}
	return parent + "." + field
}

// isStringMap reports whether key is a StringMap option.
func isStringMap(key string) bool {
	s := findYAML(key)
	return s != nil && s.kind == kStringMap
}

// addYAMLValue converts one leaf node (YAMLNodeToValue).
func addYAMLValue(key string, node *yaml.Node, out env) error {
	if key == "" {
		return errors.New("Found empty key in YAML config file")
	}
	s := findYAML(key)
	if s == nil {
		return fmt.Errorf("Unrecognized option: %s", key)
	}
	if _, dup := out[key]; dup {
		return fmt.Errorf("Error parsing YAML config: duplicate key: %s(canonical key: %s)", key, key)
	}
	if s.kind == kStringMap {
		return addYAMLStringMap(key, node, out)
	}
	v, err := toValue(scalar(node), s, key)
	if err != nil {
		return err
	}
	out[key] = v
	return nil
}

// scalar returns the node's text as yaml-cpp's Scalar() would: empty for
// null, sequence and mapping nodes.
func scalar(node *yaml.Node) string {
	if node.Kind != yaml.ScalarNode || node.Tag == "!!null" {
		return ""
	}
	return node.Value
}

// addYAMLStringMap reads setParameter's map, keeping file order.
func addYAMLStringMap(key string, node *yaml.Node, out env) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("Option: %s is of type StringMap, but value in YAML config is not a map type", key)
	}
	var list []Param
	for i := 0; i+1 < len(node.Content); i += 2 {
		name, value := node.Content[i].Value, node.Content[i+1]
		if value.Kind == yaml.MappingNode || value.Kind == yaml.SequenceNode {
			return fmt.Errorf("Option: %s has a map with non scalar values, which is not allowed", key)
		}
		for _, p := range list {
			if p.Name == name {
				return fmt.Errorf("String Map Option: %s has duplicate keys in YAML Config: %s", key, name)
			}
		}
		list = append(list, Param{Name: name, Value: scalar(value)})
	}
	out[key] = list
	return nil
}

// parseINI reads the legacy "name = value" config format, where names are
// command line long names and switches take true/false.
func parseINI(text string) (env, error) {
	out := env{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		if err := addINIValue(strings.TrimSpace(name), strings.TrimSpace(value), out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addINIValue stores one INI assignment.
func addINIValue(name, value string, out env) error {
	s := findCLI(name)
	if s == nil {
		return fmt.Errorf("Error parsing INI config file: unrecognised option '%s'", name)
	}
	if s.kind == kStringMap {
		list, _ := out[s.key].([]Param)
		p, err := splitAssignment(value)
		if err != nil {
			return err
		}
		list, err = addParam(list, p)
		out[s.key] = list
		return err
	}
	if _, dup := out[s.key]; dup {
		return fmt.Errorf("Error parsing INI config file:  Multiple occurrences of option \"%s\"", name)
	}
	v, err := toValue(value, s, s.cli)
	if err != nil {
		return err
	}
	out[s.key] = v
	return nil
}
