package hostctl

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// refusedCommands are commands (lower case) that make a server write files
// outside its dbpath or send data to another host.
var refusedCommands = map[string]string{
	"setfreemonitoring": "free monitoring sends the server's metrics to a web service on another host, and " + insteadRemote,
	"createbackup":      "it writes a backup to a directory or an object store outside the dbpath",
}

// CheckCommand refuses a command document that would set a parameter that
// names a file or another host, hand WiredTiger a string that names a
// file, library or store, or run a command of refusedCommands. A
// setParameter field at any position makes every other field a parameter
// (CheckParameter); a configString field at any depth (storageEngine =
// { wiredTiger = { configString = ... } } of create, createIndexes,
// collMod, applyOps) is checked with CheckWTConfig. Names are compared
// without regard to case. The error names the field, never its value.
func CheckCommand(cmd bson.D) error {
	data, err := bson.Marshal(cmd)
	if err != nil {
		return fmt.Errorf("encode the command: %w", err)
	}
	fields, err := bson.Raw(data).Elements()
	if err != nil {
		return fmt.Errorf("read the command: %w", err)
	}
	setParameter := false
	for _, f := range fields {
		key := strings.ToLower(f.Key())
		if why, refused := refusedCommands[key]; refused {
			return fmt.Errorf("%s is refused: %s", f.Key(), why)
		}
		setParameter = setParameter || key == "setparameter"
	}
	if setParameter {
		for _, f := range fields {
			if strings.EqualFold(f.Key(), "setParameter") {
				continue
			}
			var value any = f.Value()
			if s, ok := f.Value().StringValueOK(); ok {
				value = s
			}
			if err := CheckParameter(f.Key(), value); err != nil {
				return fmt.Errorf("setParameter %w", err)
			}
		}
	}
	return checkConfigStrings(bson.Raw(data), "")
}

// checkConfigStrings checks every configString field inside doc (a
// document or an array), at any depth; path names where doc is.
func checkConfigStrings(doc bson.Raw, path string) error {
	fields, err := doc.Elements()
	if err != nil {
		return fmt.Errorf("read the command: %w", err)
	}
	for _, f := range fields {
		where := f.Key()
		if path != "" {
			where = path + "." + where
		}
		v := f.Value()
		if s, ok := v.StringValueOK(); ok && strings.EqualFold(f.Key(), "configString") {
			if err := CheckWTConfig(s); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
		var inner bson.Raw
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			inner = v.Document()
		case bson.TypeArray:
			inner = bson.Raw(v.Array())
		default:
			continue
		}
		if err := checkConfigStrings(inner, where); err != nil {
			return err
		}
	}
	return nil
}
