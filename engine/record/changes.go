package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"wtd/engine/mongodconf"
	"wtd/engine/store"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ChangeWhat words what a change set and, for a parameter, its value
// before: "cacheSizeGB=0.25" style for a config file, "name=value (was
// before)" for a parameter, the index and its namespace for an index, the
// command and who allowed it for a command.
func ChangeWhat(c store.Change) string {
	switch c.Kind {
	case store.ChangeConfig:
		var edits []mongodconf.Edit
		if err := json.Unmarshal([]byte(c.Change), &edits); err != nil {
			return "config " + c.Target + " " + c.Change
		}
		parts := make([]string, len(edits))
		for i, e := range edits {
			parts[i] = e.Key + "=" + e.Value
		}
		return "config " + c.Target + ": " + strings.Join(parts, " ")
	case store.ChangeParameter:
		value, before := c.Change, c.Before
		if v, err := DecodeValue(c.Change); err == nil {
			value = fmt.Sprint(v)
		}
		if v, err := DecodeValue(c.Before); err == nil {
			before = fmt.Sprint(v)
		}
		return fmt.Sprintf("setParameter %s=%s (was %s)", c.Target, value, before)
	case store.ChangeIndex:
		return indexWhat(c)
	case store.ChangeCommand:
		return commandWhat(c)
	}
	return c.Kind + " " + c.Target
}

// CommandChange is the change column of a command m:command ran (kind
// command).
type CommandChange struct {
	DB string `json:"db"`
	// Command is the command document as relaxed extended JSON, clipped
	// to maxCommandText bytes.
	Command   string `json:"command"`
	Why       string `json:"why"`
	AllowedBy string `json:"allowed_by"`
}

// commandWhat words a command change: "ran createIndexes on test through
// m:command (allowed by --allow-commands)".
func commandWhat(c store.Change) string {
	var cc CommandChange
	if err := json.Unmarshal([]byte(c.Change), &cc); err != nil {
		return "ran " + c.Target + " through m:command"
	}
	return fmt.Sprintf("ran %s on %s through m:command (allowed by %s)", c.Target, cc.DB, cc.AllowedBy)
}

// IndexChange is the change column of an index m:create_index made on a
// server wtd did not start (kind index; the target is db.collection).
type IndexChange struct {
	Name string `json:"name"`
	// Spec is the index document sent (key, name, options) as relaxed
	// extended JSON.
	Spec string `json:"spec"`
	// CollectionCreated: the collection did not exist, so creating the
	// index created it too.
	CollectionCreated bool `json:"collection_created,omitempty"`
}

// indexWhat words an index change: "index createdAt_1 on t.c {...}".
func indexWhat(c store.Change) string {
	var ic IndexChange
	if err := json.Unmarshal([]byte(c.Change), &ic); err != nil {
		return "index on " + c.Target
	}
	what := fmt.Sprintf("index %s on %s %s", ic.Name, c.Target, ic.Spec)
	if ic.CollectionCreated {
		what += " (it created the collection)"
	}
	return what
}

// DecodeValue reads a value a change recorded (a parameter's value, or
// its value before) from its one-field extended JSON document.
func DecodeValue(s string) (any, error) {
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(s), true, &d); err != nil || len(d) != 1 {
		return nil, fmt.Errorf("decode the value before the change %q: %v", s, err)
	}
	return d[0].Value, nil
}

// EncodeValue keeps a parameter's value with its BSON type (an int32
// parameter is set back as an int32).
func EncodeValue(v any) (string, error) {
	b, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	return string(b), err
}
