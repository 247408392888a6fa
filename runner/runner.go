// Package runner carries out one playbook run end to end, the same way
// for `wtd run` and for the daemon: read and check the playbook (usage
// errors leave nothing recorded), record the run (engine.StartRun) under
// the host's experiment lock, run the Lua (luabind.RunPlaybook) and record
// its end, stopping every server it started, however it ends.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"

	"wtd/luabind"
)

// Playbook is a playbook read and checked with its parameters.
type Playbook struct {
	Path      string
	Source    string
	Overrides map[string]string
}

// UsageError is a playbook that cannot run as given: unreadable, a Lua
// syntax error, an unknown or malformed parameter. It is found before
// anything is recorded.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error behind the usage error.
func (e *UsageError) Unwrap() error { return e.Err }

// ReadPlaybook reads the playbook at path and checks it and its
// parameters (luabind.Check) without running anything; every failure is a
// *UsageError.
func ReadPlaybook(ctx context.Context, path string, overrides map[string]string) (Playbook, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Playbook{}, &UsageError{Err: fmt.Errorf("read playbook: %w", err)}
	}
	if err := luabind.Check(ctx, path, string(src), overrides); err != nil {
		return Playbook{}, &UsageError{Err: err}
	}
	if overrides == nil {
		overrides = map[string]string{}
	}
	return Playbook{Path: path, Source: string(src), Overrides: overrides}, nil
}

// IsParamError reports whether err is a -p parameter the playbook refused
// while it ran (the CLI exits 2 for it, as for a usage error).
func IsParamError(err error) bool {
	var pe *luabind.ParamError
	return errors.As(err, &pe)
}

// stringParams records the raw -p values as the run's parameters until
// the playbook declares its own.
func stringParams(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
