package options

import (
	"fmt"
	"strings"
)

// env is a set of option values keyed by canonical key, like mongod's
// moe::Environment. Values are string, int32, float64, bool or []Param.
type env map[string]any

// toValue converts a raw string to the option's type, returning mongod's
// error text on failure (options_parser.cpp stringToValue). key is the name
// mongod reports: the long name on the command line, the dotted name in a
// config file.
func toValue(raw string, s *spec, key string) (any, error) {
	switch s.kind {
	case kSwitch:
		return parseBoolText(raw, "Expected boolean switch but found string: ", key)
	case kBool:
		return parseBoolText(raw, "Expected boolean but found string: ", key)
	case kInt:
		n, reason := parseInt32(raw)
		if reason != "" {
			return nil, fmt.Errorf("Error parsing option \"%s\" as int: %s", key, reason)
		}
		return n, nil
	case kDouble:
		f, reason := parseDouble(raw)
		if reason != "" {
			return nil, fmt.Errorf("Error parsing option \"%s\" as double in: %s", key, reason)
		}
		return f, nil
	}
	return raw, nil
}

// parseBoolText accepts exactly "true" or "false".
func parseBoolText(raw, prefix, key string) (any, error) {
	switch raw {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return nil, fmt.Errorf("%s%s for option: %s", prefix, raw, key)
}

// splitAssignment splits a "name=value" setParameter argument.
func splitAssignment(arg string) (Param, error) {
	name, value, ok := strings.Cut(arg, "=")
	if !ok {
		return Param{}, fmt.Errorf("Illegal option assignment: \"%s\"", arg)
	}
	return Param{Name: name, Value: value}, nil
}

// addParam appends p to list, rejecting a second, different value for the
// same name from one source, as mongod does.
func addParam(list []Param, p Param) ([]Param, error) {
	for _, q := range list {
		if q.Name == p.Name && q.Value != p.Value {
			return nil, fmt.Errorf(
				"Key Value Option: setParameter has a duplicate key from the same source: %s", p.Name)
		}
		if q.Name == p.Name {
			return list, nil
		}
	}
	return append(list, p), nil
}

// mergeParams composes setParameter from the config file and the command
// line: command line values override, order of first appearance is kept.
func mergeParams(file, cmd []Param) []Param {
	out := append([]Param(nil), file...)
	for _, p := range cmd {
		replaced := false
		for i := range out {
			if out[i].Name == p.Name {
				out[i].Value = p.Value
				replaced = true
			}
		}
		if !replaced {
			out = append(out, p)
		}
	}
	return out
}

// merge overlays the command line environment on the config file one.
func merge(file, cmd env) env {
	out := env{}
	for k, v := range file {
		out[k] = v
	}
	for k, v := range cmd {
		out[k] = v
	}
	fp, _ := file[keySetParam].([]Param)
	cp, _ := cmd[keySetParam].([]Param)
	if fp != nil || cp != nil {
		out[keySetParam] = mergeParams(fp, cp)
	}
	return out
}
