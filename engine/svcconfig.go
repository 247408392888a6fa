package engine

import (
	"wtd/engine/mongodconf"
	"wtd/hostctl"
)

// keyConfigString is the key of mongod's configuration that holds
// WiredTiger's startup configuration, from the table of knobs.
var keyConfigString = hostctl.OptionConfigKey("engineConfig")

const keyLogPath = "systemLog.path"

// editsFor turns a restart's changes into config edits, in the order of
// the table of knobs (hostctl.SettingsChange.ConfigEntries).
func editsFor(ch ServerChanges) []mongodconf.Edit {
	var out []mongodconf.Edit
	for _, e := range ch.ConfigEntries() {
		switch e.Type {
		case hostctl.KnobFloat:
			out = append(out, mongodconf.Edit{Key: e.Key, Value: mongodconf.FormatG(e.Number), Tag: "!!float"})
		case hostctl.KnobString:
			out = append(out, mongodconf.Edit{Key: e.Key, Value: e.Text, Tag: "!!str"})
		default:
			out = append(out, mongodconf.Edit{Key: e.Key, Value: e.Text, Tag: mongodconf.ScalarTag(e.Text)})
		}
	}
	return out
}
