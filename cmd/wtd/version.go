package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// buildStamp is what the Go toolchain embedded about the source the binary
// was built from (go build in a git checkout stamps the commit).
type buildStamp struct {
	commit   string
	time     time.Time
	modified bool
}

func readBuildStamp() buildStamp {
	var b buildStamp
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = s.Value
		case "vcs.time":
			b.time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// versionString is the version every run records and `wtd version`
// prints: "0.1.0-dev commit 77cf92f… (2026-12-01T14:52:00Z, modified) go1.26".
func versionString() string {
	b := readBuildStamp()
	s := Version
	if b.commit == "" {
		s += " commit unknown (built without version control information)"
	} else {
		s += " commit " + b.commit
		detail := ""
		if !b.time.IsZero() {
			detail = "committed " + b.time.UTC().Format(time.RFC3339)
		}
		if b.modified {
			if detail != "" {
				detail += ", "
			}
			detail += "with uncommitted changes"
		}
		if detail != "" {
			s += " (" + detail + ")"
		}
	}
	return fmt.Sprintf("%s %s", s, runtime.Version())
}
