package hostctl

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DefaultBindIP is the address a server listens on when ServerSpec.BindIP
// is empty.
const DefaultBindIP = "127.0.0.1"

// MaxSyncDelay is StorageGlobalParams::kMaxSyncdelaySecs (4.x), the
// syncdelay row's maximum.
const MaxSyncDelay = 9e6

// ServerSpec is how to start one mongod (or a mongod-compatible server).
type ServerSpec struct {
	// Binary is the path of the server executable.
	Binary string `json:"binary"`
	// DBPath is the data directory; Start creates it when missing.
	DBPath string `json:"dbpath"`
	// Port is the TCP port; 0 lets Start pick a free one.
	Port int `json:"port"`
	// BindIP is a comma-separated list of loopback addresses; empty means
	// 127.0.0.1.
	BindIP string `json:"bind_ip,omitempty"`
	// Settings are the knobs the server is given (flags, parameters,
	// args).
	Settings
	// LogPath receives the server's stdout and stderr; empty means
	// <DBPath>/mongod.log.
	LogPath string `json:"log_path,omitempty"`
}

func (s ServerSpec) bindIP() string {
	if s.BindIP == "" {
		return DefaultBindIP
	}
	return s.BindIP
}

func (s ServerSpec) logPath() string {
	if s.LogPath != "" {
		return s.LogPath
	}
	return s.DBPath + "/mongod.log"
}

// Args returns the command-line arguments for the server, without the
// binary. The server logs to stdout (no --logpath): Start captures it.
func (s ServerSpec) Args() []string {
	args := []string{
		"--port", strconv.Itoa(s.Port),
		"--bind_ip", s.bindIP(),
		"--dbpath", s.DBPath,
	}
	return append(args, s.Flags()...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Validate checks the settings before a start, in mongod's own words where
// mongod has them, so a bad knob fails before a server is stopped.
func (s ServerSpec) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format, a...))
	}
	if s.Binary == "" {
		bad("binary: no server executable given")
	}
	if s.DBPath == "" {
		bad("dbpath: no data directory given")
	}
	if s.Port < 0 {
		bad("port %d: net.port must be greater than or equal to 0", s.Port)
	} else if s.Port > 65535 {
		bad("port %d: net.port must be less than or equal to 65535", s.Port)
	}
	for _, ip := range strings.Split(s.bindIP(), ",") {
		if err := CheckLoopback(strings.TrimSpace(ip)); err != nil {
			bad("bind_ip %q: %w", s.BindIP, err)
		}
	}
	errs = append(errs, s.Settings.errors()...)
	if len(errs) > 0 {
		return fmt.Errorf("validate mongod settings: %w", errors.Join(errs...))
	}
	return nil
}
