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
	// CacheSizeGB is --wiredTigerCacheSizeGB; 0 keeps the server default.
	CacheSizeGB float64 `json:"cache_size_gb,omitempty"`
	// EngineConfig is --wiredTigerEngineConfigString, e.g.
	// "eviction_target=60,eviction_trigger=80".
	EngineConfig string `json:"engine_config,omitempty"`
	// SyncDelay is --syncdelay in seconds (the checkpoint interval); 0
	// keeps the default.
	SyncDelay float64 `json:"syncdelay,omitempty"`
	// SetParameters become repeated --setParameter name=value, by name.
	SetParameters map[string]string `json:"set_parameters,omitempty"`
	// ExtraArgs are appended as they are.
	ExtraArgs []string `json:"extra_args,omitempty"`
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
	if s.CacheSizeGB != 0 {
		args = append(args, "--"+MustKnob("cacheSizeGB").Flag, formatFloat(s.CacheSizeGB))
	}
	if s.EngineConfig != "" {
		args = append(args, "--"+MustKnob("eviction_target").Flag, s.EngineConfig)
	}
	if s.SyncDelay != 0 {
		args = append(args, "--"+MustKnob("syncdelay").Flag, formatFloat(s.SyncDelay))
	}
	for _, n := range sortedKeys(s.SetParameters) {
		args = append(args, "--setParameter", n+"="+s.SetParameters[n])
	}
	return append(args, s.ExtraArgs...)
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
	errs = append(errs, s.settingsErrors()...)
	if err := CheckArgs(s.ExtraArgs); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("validate mongod settings: %w", errors.Join(errs...))
	}
	return nil
}

// ValidateSettings checks only the tuning settings (cacheSizeGB,
// syncdelay, setParameter names and values, engineConfig), as Validate does: for a
// server wtd does not start itself (a service's config file).
func (s ServerSpec) ValidateSettings() error {
	if errs := s.settingsErrors(); len(errs) > 0 {
		return fmt.Errorf("validate mongod settings: %w", errors.Join(errs...))
	}
	return nil
}

func (s ServerSpec) settingsErrors() []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf(format, a...))
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"cacheSizeGB", s.CacheSizeGB}, {"syncdelay", s.SyncDelay}} {
		if err := MustKnob(c.name).Check(c.v); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range sortedKeys(s.SetParameters) {
		if n == "" || strings.ContainsAny(n, "= ") {
			bad("setParameter %q: a parameter name has no '=' or spaces", n)
		} else if err := CheckParameter(n, s.SetParameters[n]); err != nil {
			bad("setParameter %w", err)
		}
	}
	if err := CheckWTConfig(s.EngineConfig); err != nil {
		bad("engineConfig: %w", err)
	} else if err := CheckWTKnobs(s.EngineConfig); err != nil {
		bad("engineConfig: %w", err)
	}
	return errs
}
